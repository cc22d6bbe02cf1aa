import type { LockImpl } from "../impls/lock-impl.js";
import type { HandOffResult } from "../workloads/hand-off.js";
import type { FleetResult } from "../workloads/idle-fleet.js";
import type { SpreadResult } from "../workloads/spread.js";
import { count, mib, ms, pct, ratio, table, usPer } from "./format.js";

/** The hand-off table of one contender count; ratios are against the spin lock. */
export function handOffTable(results: HandOffResult[], impls: LockImpl[]): string {
  const spin = results.find((r) => r.impl === "spin");
  const rows = results.map((r) => {
    const c = r.counters;
    const n = r.handOffs;
    return [
      label(impls, r.impl),
      count(r.handOffsPerS),
      ratio(spin ? r.handOffsPerS / spin.handOffsPerS : undefined),
      ms(r.gap.meanMs),
      ms(r.gap.p50Ms),
      ms(r.gap.p99Ms),
      c.redis ? count(c.redis.wireCommands / n, 2) : "–",
      c.redis ? count(c.redis.commands / n, 1) : "–",
      usPer(c.redis?.cpuSeconds, n),
      usPer(c.serverCpuSeconds, n),
      usPer(c.clientCpuSeconds, n),
      count(r.fairness, 4),
      pct(r.toWaiterShare),
      String(r.violations),
      String(r.errors),
    ];
  });
  return table(
    [
      "implementation",
      "hand-offs/s",
      "vs spin lock",
      "gap mean ms",
      "gap p50 ms",
      "gap p99 ms",
      "Redis cmds sent /cycle",
      "Redis cmds incl. in scripts /cycle",
      "Redis CPU µs/cycle",
      "server CPU µs/cycle",
      "client CPU µs/cycle",
      "fairness (Jain)",
      "to a waiter",
      "exclusion violations",
      "errors",
    ],
    rows,
  );
}

/** The spread table of one worker count; ratios are against redis-semaphore. */
export function spreadTable(results: SpreadResult[], impls: LockImpl[]): string {
  const sem = results.find((r) => r.impl === "redis-semaphore");
  const rows = results.map((r) => {
    const c = r.counters;
    return [
      label(impls, r.impl),
      count(r.cyclesPerS),
      ratio(sem ? r.cyclesPerS / sem.cyclesPerS : undefined),
      ms(r.acquire.p50Ms),
      ms(r.acquire.p99Ms),
      c.redis ? count(c.redis.wireCommands / r.cycles, 2) : "–",
      c.redis ? count(c.redis.commands / r.cycles, 1) : "–",
      usPer(c.redis?.cpuSeconds, r.cycles),
      usPer(c.serverCpuSeconds, r.cycles),
      usPer(c.clientCpuSeconds, r.cycles),
      String(r.violations),
      String(r.errors),
    ];
  });
  return table(
    [
      "implementation",
      "cycles/s",
      "vs redis-semaphore",
      "acquire p50 ms",
      "acquire p99 ms",
      "Redis cmds sent /cycle",
      "Redis cmds incl. in scripts /cycle",
      "Redis CPU µs/cycle",
      "server CPU µs/cycle",
      "client CPU µs/cycle",
      "exclusion violations",
      "errors",
    ],
    rows,
  );
}

/** The idle-fleet table: what holding many locks and only renewing them costs. */
export function fleetTable(f: FleetResult): string {
  const ttlS = f.ttlMs / 1000;
  const rows: [string, string][] = [
    ["sessions × locks each", `${count(f.sessions)} × ${count(f.locks / f.sessions)} = ${count(f.locks)} locks held`],
    ["session TTL / keepalive interval", `${ttlS} s / ${count(ttlS / 3, 1)} s`],
    ["setup (open + acquire all)", `${count(f.setupSeconds, 1)} s`],
    ["measurement window", `${count(f.seconds, 1)} s`],
    [
      "coordinator RSS before the fleet → during",
      `${mib(f.coordinatorRssBeforeBytes)} → ${mib(f.coordinatorRssBytes)}`,
    ],
    ["coordinator CPU", f.coordinatorCpuPct === undefined ? "–" : `${count(f.coordinatorCpuPct, 1)}% of one core`],
    [
      "keepalives acknowledged /s (expected 3 × sessions / TTL)",
      `${count(f.keepAlivesPerS)} (${count((3 * f.sessions) / ttlS)})`,
    ],
    [
      "renewal scripts /s (expected 3 × sessions / TTL: one per keepalive)",
      `${count(f.renewScriptsPerS)} (${count(f.predictedRenewScriptsPerS)})`,
    ],
    ["Redis commands /s incl. inside scripts", count(f.redisCommandsPerS)],
    ["Redis CPU", `${count(f.redisCpuPct, 1)}% of one core`],
    ["Redis used memory", mib(f.redisUsedMemoryBytes)],
    ["keepalive round trip mean / p50 / p99", `${ms(f.rtt.meanMs)} / ${ms(f.rtt.p50Ms)} / ${ms(f.rtt.p99Ms)} ms`],
    ["event-loop delay p99 of the sessions' (bench) process", `${ms(f.clientLoopDelayP99Ms)} ms`],
    ["locks lost / failures", `${f.lost} / ${f.failures}`],
  ];
  return table(["idle fleet", "measured"], rows);
}

function label(impls: LockImpl[], id: string): string {
  return impls.find((i) => i.id === id)?.label ?? id;
}
