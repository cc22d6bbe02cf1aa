import type { LatencySummary } from "../../bench/stats.js";
import type { Discipline, HandOffResult } from "../../bench/workloads/hand-off.js";
import type { WindowCounters } from "../../bench/workloads/measurement-window.js";
import type { SpreadResult } from "../../bench/workloads/spread.js";

/** A latency summary with max = p99. */
export const latency = (p50Ms: number, meanMs: number, p99Ms: number): LatencySummary => ({
  count: 100,
  meanMs,
  p50Ms,
  p99Ms,
  maxMs: p99Ms,
});

/** Window counters of CPU seconds over a 1 s window; Redis only where the implementation uses it. */
export const counters = (server: number | undefined, client: number, redis?: number): WindowCounters => ({
  seconds: 1,
  serverCpuSeconds: server,
  clientCpuSeconds: client,
  redis:
    redis === undefined
      ? undefined
      : { commands: 0, wireCommands: 0, wireUsec: 0, cpuSeconds: redis, calls: new Map() },
});

/** A hand-off result with 8 contenders over a 1 s window (after-turn unless `discipline` says). */
export function handOff(
  impl: string,
  gap: LatencySummary,
  handOffsPerS: number,
  c: WindowCounters,
  discipline: Discipline = "after-turn",
): HandOffResult {
  const base = { contenders: 8, discipline, handOffs: handOffsPerS, handOffsPerS, gap, gapsMs: [], fairness: 1 };
  return { ...base, impl, violations: 0, toWaiterShare: 1, errors: 0, counters: c };
}

/** A spread result with 16 workers over a 1 s window. */
export function spread(impl: string, cyclesPerS: number, c: WindowCounters): SpreadResult {
  const acquire = latency(0.5, 0.5, 1);
  return {
    impl,
    workers: 16,
    cycles: cyclesPerS,
    cyclesPerS,
    acquire,
    acquireMs: [],
    violations: 0,
    errors: 0,
    counters: c,
  };
}

/** Turnstile on Redis, 8 contenders: 0.4 ms p50 / 0.5 ms mean, 2,000 hand-offs/s. */
export const onRedis = handOff("turnstile", latency(0.4, 0.5, 2), 2000, counters(0.2, 0.3, 0.1));
/** Turnstile on the embedded store, 8 contenders: 0.2 ms p50 / 0.3 ms mean, 3,000 hand-offs/s. */
export const embedded = handOff("turnstile-embedded", latency(0.2, 0.3, 1), 3000, counters(0.2, 0.3));
