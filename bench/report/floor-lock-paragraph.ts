import type { BenchResults } from "../run-plan.js";
import type { WindowCounters } from "../workloads/measurement-window.js";
import { count, ratio } from "./format.js";

/** µs per operation of each process on the path, and of Redis running the scripts sent. */
function perOp(c: WindowCounters, n: number) {
  const us = (seconds: number | undefined) => (seconds === undefined || !n ? Number.NaN : (seconds * 1e6) / n);
  return {
    server: us(c.serverCpuSeconds),
    client: us(c.clientCpuSeconds),
    redis: us(c.redis?.cpuSeconds),
    scripts: c.redis ? c.redis.wireUsec / n : Number.NaN,
  };
}

/** "a against b" for each process: Turnstile's µs beside the floor lock's. */
function split(mine: ReturnType<typeof perOp>, floor: ReturnType<typeof perOp>): string {
  const pair = (a: number, b: number) => `${count(a)} against ${count(b)}`;
  return (
    `the coordinator ${pair(mine.server, floor.server)} µs of CPU, the clients' process ${pair(mine.client, floor.client)}, ` +
    `Redis ${pair(mine.redis, floor.redis)}, of which running the scripts (INFO commandstats) ${pair(mine.scripts, floor.scripts)}`
  );
}

/**
 * "Against the floor lock": where Turnstile's hand-off and uncontended cycle spend more than the floor
 * lock of the same run (bench/floor-lock), process by process. Empty when the floor lock did not run.
 */
export function floorLockParagraph(results: BenchResults): string[] {
  const lines: string[] = [];
  for (const h of results.handOff.filter((g) => g.contenders === 8)) {
    const t = h.results.find((r) => r.impl === "turnstile");
    const f = h.results.find((r) => r.impl === "floor");
    if (!t || !f) continue;
    const q = h.results.find((r) => r.impl === "floor-queued");
    const fq = q && perOp(q.counters, q.handOffs);
    lines.push(
      `Hand-off, 8 contenders, ${h.discipline === "at-once" ? "released at once" : "released after a turn"}: the floor lock handed off ${count(f.handOffsPerS)}/s with a gap mean of ${count(f.gap.meanMs * 1000)} µs, Turnstile ${count(t.handOffsPerS)}/s (${ratio(t.handOffsPerS / f.handOffsPerS)}) with ${count(t.gap.meanMs * 1000)} µs; per hand-off ${split(perOp(t.counters, t.handOffs), perOp(f.counters, f.handOffs))}.`,
      ...(q && fq
        ? [
            `Answering each waiter Queued as Turnstile does (the floor-queued row), the floor lock handed off ${count(q.handOffsPerS)}/s with a gap mean of ${count(q.gap.meanMs * 1000)} µs, its server at ${count(fq.server)} µs of CPU per hand-off and the clients' process at ${count(fq.client)}.`,
          ]
        : []),
    );
  }
  const s16 = results.spread.find((s) => s.workers === 16)?.results ?? [];
  const ts = s16.find((r) => r.impl === "turnstile");
  const fs = s16.find((r) => r.impl === "floor");
  if (ts && fs)
    lines.push(
      `Spread, 16 workers: the floor lock ran ${count(fs.cyclesPerS)} cycles/s, Turnstile ${count(ts.cyclesPerS)} (${ratio(ts.cyclesPerS / fs.cyclesPerS)}); per cycle ${split(perOp(ts.counters, ts.cycles), perOp(fs.counters, fs.cycles))}.`,
    );
  if (lines.length === 0) return [];
  return [
    "**Against the floor lock.** The floor lock makes the same trips with none of Turnstile's work on them (What runs),",
    "so the difference is what Turnstile's protocol, sessions and four-key scripts cost on each process.",
    ...lines,
    "A target the floor lock itself misses (Targets) is out of reach for any coordinator of this shape on this machine;",
    "one it meets is held by that difference.",
    "",
  ];
}
