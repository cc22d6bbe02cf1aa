import type { HandOffResult } from "../workloads/hand-off.js";
import type { SpreadResult } from "../workloads/spread.js";
import { busyCores, totalCpuUs } from "./cpu-per-cycle.js";
import { count, ms, pct, ratio, usPer } from "./format.js";

/** The mean-gap target a hand-off paragraph measures against: its bound in ms and how it was set. */
export interface GapTarget {
  ms: number;
  /** e.g. "1.3× the echo + EVALSHA floor". */
  what: string;
}

/**
 * Sentences for the hand-off paragraph: Turnstile on Redis against the same client and coordinator
 * on the embedded store, i.e. how much of the gap and of the hand-off rate is the Redis hop, and
 * (given `target`) which of them meets the mean-gap target. Empty when the embedded row did not run.
 */
export function handOffRedisHop(t: HandOffResult, e: HandOffResult | undefined, target?: GapTarget): string[] {
  if (!e) return [];
  const d50 = t.gap.p50Ms - e.gap.p50Ms;
  const dMean = t.gap.meanMs - e.gap.meanMs;
  const out = [
    "On the embedded store (the same client and coordinator in their own processes, but no Redis round trip",
    `and no Redis process competing for the cores) the gap is ${ms(e.gap.p50Ms)} ms p50 / ${ms(e.gap.meanMs)} ms mean /`,
    `${ms(e.gap.p99Ms)} ms p99 at ${count(e.handOffsPerS)} hand-offs/s, against ${ms(t.gap.p50Ms)} / ${ms(t.gap.meanMs)} /`,
    `${ms(t.gap.p99Ms)} ms at ${count(t.handOffsPerS)} hand-offs/s on Redis.`,
  ];
  if (d50 > 0 && dMean > 0)
    out.push(
      `The Redis hop is ${ms(d50)} ms of the p50 gap (${pct(d50 / t.gap.p50Ms, 0)}) and ${ms(dMean)} ms of the mean`,
      `(${pct(dMean / t.gap.meanMs, 0)}); without it Turnstile hands off ${ratio(e.handOffsPerS / t.handOffsPerS)} as often.`,
    );
  else out.push("The embedded store's gap is not smaller in this run: it shows no measurable cost of the Redis hop.");
  if (!target) return out;
  const bound = `the ${ms(target.ms)} ms target (${target.what})`;
  if (e.gap.meanMs > target.ms)
    out.push(
      `Even with no Redis hop the mean gap is above ${bound}: on this machine the client–coordinator`,
      "round trip and the coordinator's own work already take longer.",
    );
  else if (t.gap.meanMs > target.ms)
    out.push(
      `Without the Redis hop the mean gap is within ${bound}: what Turnstile on Redis misses it by`,
      "is the Redis round trip and the third busy process.",
    );
  return out;
}

/**
 * Sentences for the spread paragraph (16 workers): CPU per cycle per process and cycles/s of
 * Turnstile on Redis against the embedded store, and the embedded row against redis-semaphore, i.e.
 * what the client and coordinator reach with no Redis work at all. Empty without the embedded row.
 */
export function spreadRedisHop(ts: SpreadResult, e: SpreadResult | undefined, sem?: SpreadResult): string[] {
  if (!e) return [];
  const tc = ts.counters;
  const ec = e.counters;
  const out = [
    `On the embedded store the same cycle cost ${count(totalCpuUs(ec, e.cycles))} µs of CPU (coordinator`,
    `${usPer(ec.serverCpuSeconds, e.cycles)}, clients ${usPer(ec.clientCpuSeconds, e.cycles)}, no Redis) against ${count(totalCpuUs(tc, ts.cycles))} µs on Redis`,
    `(coordinator ${usPer(tc.serverCpuSeconds, ts.cycles)}, clients ${usPer(tc.clientCpuSeconds, ts.cycles)}, Redis ${usPer(tc.redis?.cpuSeconds, ts.cycles)}),`,
    `and ran ${count(e.cyclesPerS)} cycles/s, ${ratio(e.cyclesPerS / ts.cyclesPerS)} Turnstile on Redis (${count(busyCores(ec), 2)} cores' worth of CPU busy,`,
    `against ${count(busyCores(tc), 2)}).`,
  ];
  if (!sem) return out;
  const vsSem = e.cyclesPerS / sem.cyclesPerS;
  out.push(
    `That is ${ratio(vsSem)} redis-semaphore's cycles/s: what the client and coordinator processes reach with no`,
    vsSem < 1
      ? "Redis work at all. So even a store that cost nothing would leave Turnstile short of the spread target on this machine."
      : "Redis work at all. So the coordinator hop alone could match redis-semaphore: what Turnstile on Redis misses the spread target by is the Redis round trip and its scripts.",
  );
  return out;
}
