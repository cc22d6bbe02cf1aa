import type { BenchResults } from "../run-plan.js";
import { count, ms, ratio, verdict } from "./format.js";

/** One row of the targets table. */
export interface TargetRow {
  target: string;
  measured: string;
  met: boolean | undefined;
}

/** Checks the targets against this run (all ratios from the same run). */
export function targetRows(results: BenchResults): TargetRow[] {
  const h8 = results.handOff.find((h) => h.contenders === 8)?.results;
  const t = h8?.find((r) => r.impl === "turnstile");
  const spin = h8?.find((r) => r.impl === "spin");
  const s16 = results.spread.find((s) => s.workers === 16)?.results;
  const ts = s16?.find((r) => r.impl === "turnstile");
  const sem = s16?.find((r) => r.impl === "redis-semaphore");
  const f = results.fleet;
  const rows: TargetRow[] = [];
  if (t) {
    const sent = t.counters.redis ? t.counters.redis.wireCommands / t.handOffs : undefined;
    const all = t.counters.redis ? t.counters.redis.commands / t.handOffs : undefined;
    rows.push(
      {
        target: "hand-off, 8 contenders: gap mean ≤ 0.25 ms",
        measured: `${ms(t.gap.meanMs)} ms`,
        met: t.gap.meanMs <= 0.25,
      },
      { target: "hand-off, 8 contenders: gap p99 ≤ 1 ms", measured: `${ms(t.gap.p99Ms)} ms`, met: t.gap.p99Ms <= 1 },
      {
        target: "hand-off, 8 contenders: hand-offs/s ≥ 1.8× the spin lock",
        measured: spin
          ? `${ratio(t.handOffsPerS / spin.handOffsPerS)} (${count(t.handOffsPerS)} vs ${count(spin.handOffsPerS)})`
          : "spin lock not run",
        met: spin ? t.handOffsPerS >= 1.8 * spin.handOffsPerS : undefined,
      },
      {
        target: "hand-off: ≤ 3 Redis commands per cycle",
        measured: `${count(sent, 2)} sent (EVALSHA); ${count(all, 1)} counting the calls inside the scripts`,
        met: sent === undefined ? undefined : sent <= 3,
      },
      { target: "hand-off: fairness (Jain) ≥ 0.999", measured: count(t.fairness, 4), met: t.fairness >= 0.999 },
      { target: "hand-off: 0 exclusion violations", measured: String(t.violations), met: t.violations === 0 },
    );
  }
  if (ts) {
    rows.push({
      target: "spread, 16 workers: cycles/s ≥ 1.0× redis-semaphore",
      measured: sem
        ? `${ratio(ts.cyclesPerS / sem.cyclesPerS)} (${count(ts.cyclesPerS)} vs ${count(sem.cyclesPerS)})`
        : "redis-semaphore not run",
      met: sem ? ts.cyclesPerS >= sem.cyclesPerS : undefined,
    });
  }
  if (f) {
    const perLock = f.renewScriptsPerS / f.predictedRenewScriptsPerS;
    rows.push({
      target: "idle fleet: renewals cost O(sessions + locks/TTL) Redis work",
      measured: `${count(f.renewScriptsPerS)} renewal scripts/s = ${count(perLock, 2)} × (3 × ${count(f.locks)} locks / ${f.ttlMs / 1000} s); ${count(f.keepAlivesPerS)} keepalives/s`,
      met: perLock < 1.2,
    });
  }
  return rows;
}

/** The targets as a markdown table. */
export function targetTable(rows: TargetRow[]): string {
  const body = rows.map((r) => `| ${r.target} | ${r.measured} | ${verdict(r.met)} |`);
  return ["| target | this run | |", "| --- | --- | --- |", ...body].join("\n");
}
