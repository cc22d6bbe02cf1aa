import type { RedisDelta } from "../env/redis-counters.js";
import { summarize } from "../stats.js";
import type { HandOffResult } from "./hand-off.js";
import type { WindowCounters } from "./measurement-window.js";
import type { SpreadResult } from "./spread.js";

/**
 * Combines the rounds of one implementation and workload size into one result: counts, CPU and
 * Redis deltas add up over the summed window time, latency samples are pooled, and fairness is
 * the hand-off-weighted mean of each round's (contenders are new clients every round).
 */
export function mergeHandOffRounds(rounds: HandOffResult[]): HandOffResult {
  const handOffs = sum(rounds.map((r) => r.handOffs));
  const counters = mergeCounters(rounds.map((r) => r.counters));
  const gapsMs = rounds.flatMap((r) => r.gapsMs);
  const weighted = (pick: (r: HandOffResult) => number) =>
    handOffs ? sum(rounds.map((r) => pick(r) * r.handOffs)) / handOffs : Number.NaN;
  return {
    ...rounds[0],
    handOffs,
    handOffsPerS: handOffs / counters.seconds,
    gap: summarize(gapsMs),
    gapsMs,
    fairness: weighted((r) => (Number.isFinite(r.fairness) ? r.fairness : 0)),
    toWaiterShare: weighted((r) => (Number.isFinite(r.toWaiterShare) ? r.toWaiterShare : 0)),
    violations: sum(rounds.map((r) => r.violations)),
    errors: sum(rounds.map((r) => r.errors)),
    lastError: rounds.map((r) => r.lastError).find((e) => e !== undefined),
    counters,
  };
}

/** Combines the rounds of one spread run (see mergeHandOffRounds). */
export function mergeSpreadRounds(rounds: SpreadResult[]): SpreadResult {
  const cycles = sum(rounds.map((r) => r.cycles));
  const counters = mergeCounters(rounds.map((r) => r.counters));
  const acquireMs = rounds.flatMap((r) => r.acquireMs);
  return {
    ...rounds[0],
    cycles,
    cyclesPerS: cycles / counters.seconds,
    acquire: summarize(acquireMs),
    acquireMs,
    violations: sum(rounds.map((r) => r.violations)),
    errors: sum(rounds.map((r) => r.errors)),
    lastError: rounds.map((r) => r.lastError).find((e) => e !== undefined),
    counters,
  };
}

function mergeCounters(all: WindowCounters[]): WindowCounters {
  const optionalSum = (values: (number | undefined)[]) =>
    values.every((v) => v !== undefined) ? sum(values as number[]) : undefined;
  const redis = all.every((c) => c.redis) ? mergeRedis(all.map((c) => c.redis!)) : undefined;
  return {
    seconds: sum(all.map((c) => c.seconds)),
    redis,
    serverCpuSeconds: optionalSum(all.map((c) => c.serverCpuSeconds)),
    serverRssBytes: all[all.length - 1].serverRssBytes,
    clientCpuSeconds: sum(all.map((c) => c.clientCpuSeconds)),
  };
}

function mergeRedis(all: RedisDelta[]): RedisDelta {
  const calls = new Map<string, number>();
  for (const d of all) for (const [k, v] of d.calls) calls.set(k, (calls.get(k) ?? 0) + v);
  return {
    commands: sum(all.map((d) => d.commands)),
    wireCommands: sum(all.map((d) => d.wireCommands)),
    wireUsec: sum(all.map((d) => d.wireUsec)),
    cpuSeconds: sum(all.map((d) => d.cpuSeconds)),
    calls,
  };
}

function sum(values: number[]): number {
  let s = 0;
  for (const v of values) s += v;
  return s;
}
