import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import { type ProcessUsage, processUsage } from "../env/process-usage.js";
import { type RedisDelta, redisDelta, redisSnapshot } from "../env/redis-counters.js";

/** What the measurement window saw outside the clients: Redis and coordinator counters. */
export interface WindowCounters {
  seconds: number;
  redis?: RedisDelta;
  /** CPU seconds the server process (Turnstile coordinator, etcd) used during the window. */
  serverCpuSeconds?: number;
  serverRssBytes?: number;
  /** CPU seconds this (the clients') process used during the window. */
  clientCpuSeconds: number;
}

/** Where the window reads its counters; each part is optional. */
export interface CounterSources {
  redis?: Redis;
  wireCommands?: readonly string[];
  serverPid?: number;
}

/**
 * Runs a warm-up, then a measurement window during which `measuring` is true, and reads Redis and
 * coordinator counters at both ends. `tick` is called every 250 ms with the elapsed window time.
 */
export async function measureWindow(
  options: { warmupMs: number; measureMs: number; sources: CounterSources },
  state: { measuring: boolean },
  tick: (phase: "warm-up" | "measuring", elapsedMs: number) => void,
): Promise<WindowCounters> {
  const { warmupMs, measureMs, sources } = options;
  await tickingSleep(warmupMs, (ms) => tick("warm-up", ms));
  const redisBefore = sources.redis ? await redisSnapshot(sources.redis) : undefined;
  const coordBefore = sources.serverPid ? processUsage(sources.serverPid) : undefined;
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  state.measuring = true;
  await tickingSleep(measureMs, (ms) => tick("measuring", ms));
  state.measuring = false;
  const seconds = (performance.now() - startedAt) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const coordAfter: ProcessUsage | undefined = sources.serverPid ? processUsage(sources.serverPid) : undefined;
  const redisAfter = sources.redis ? await redisSnapshot(sources.redis) : undefined;
  return {
    seconds,
    redis: redisBefore && redisAfter ? redisDelta(redisBefore, redisAfter, sources.wireCommands) : undefined,
    serverCpuSeconds: coordBefore && coordAfter ? coordAfter.cpuSeconds - coordBefore.cpuSeconds : undefined,
    serverRssBytes: coordAfter?.rssBytes,
    clientCpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

async function tickingSleep(ms: number, tick: (elapsedMs: number) => void): Promise<void> {
  const start = performance.now();
  for (;;) {
    const elapsed = performance.now() - start;
    tick(elapsed);
    if (elapsed >= ms) return;
    await sleep(Math.min(250, ms - elapsed));
  }
}
