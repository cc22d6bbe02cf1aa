import type { WindowCounters } from "../workloads/measurement-window.js";

/** CPU µs per cycle summed over the processes measured in a window: server, clients and Redis. */
export function totalCpuUs(c: WindowCounters, n: number): number {
  return ((c.serverCpuSeconds ?? 0) + c.clientCpuSeconds + (c.redis?.cpuSeconds ?? 0)) * (1e6 / n);
}

/** How many cores' worth of CPU the measured processes used over the window, on average. */
export function busyCores(c: WindowCounters): number {
  return ((c.serverCpuSeconds ?? 0) + c.clientCpuSeconds + (c.redis?.cpuSeconds ?? 0)) / c.seconds;
}
