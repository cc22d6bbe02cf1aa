import type { ClusterScaleOutRow } from "../shapes/cluster-scale-out.js";
import type { ScaleOutRow } from "../shapes/scale-out.js";
import { count, ms, pct, ratio, table } from "./format.js";

/** Lock operations (acquire or release) per second per core of a process kind, from a scale-out row. */
export interface Sizing {
  /** Cycles/s divided by the coordinators' summed CPU, ×2 (a cycle is an acquire and a release). */
  opsPerCoordinatorCore: number;
  opsPerRedisCore: number;
}

/** What one scale-out row says about sizing. */
export function sizingOf(row: ScaleOutRow): Sizing {
  const coordinatorCores = row.result.coordinatorCores.reduce((s, c) => s + c, 0);
  const ops = row.result.cyclesPerS * 2;
  return {
    opsPerCoordinatorCore: ops / coordinatorCores,
    opsPerRedisCore: ops / (row.result.redisCores ?? Number.NaN),
  };
}

function scaleOutTable(rows: ScaleOutRow[]): string {
  const base = rows[0]?.result.cyclesPerS;
  return table(
    [
      "coordinators",
      "workers (processes × workers)",
      "cycles/s",
      "vs 1 coordinator",
      "acquire p50 / p99 ms",
      "each coordinator's CPU (share of a core)",
      "contender processes' CPU (all; busiest)",
      "Redis CPU",
      "busiest process",
      "lock ops/s per coordinator core",
      "lock ops/s per Redis core",
    ],
    rows.map((r) => {
      const s = sizingOf(r);
      return [
        String(r.coordinators),
        String(r.workers),
        count(r.result.cyclesPerS),
        ratio(base ? r.result.cyclesPerS / base : undefined),
        `${ms(r.result.acquire.p50Ms)} / ${ms(r.result.acquire.p99Ms)}`,
        r.result.coordinatorCores.map((c) => pct(c, 0)).join(", "),
        `${pct(r.result.clientCores, 0)}; ${pct(r.result.clientCoresMax, 0)}`,
        pct(r.result.redisCores, 0),
        `${r.busiest.process} (${pct(r.busiest.cores, 0)})`,
        count(s.opsPerCoordinatorCore),
        count(s.opsPerRedisCore),
      ];
    }),
  );
}

/**
 * The Cluster scale-out table: beside each size, the single-Redis row's rate at the same number of
 * coordinators (when it ran), each master's CPU, the busiest process and the sizing per core
 * (the masters' CPU summed for Redis).
 */
export function clusterScaleOutTable(rows: ClusterScaleOutRow[], single: ScaleOutRow[] | undefined): string {
  return table(
    [
      "coordinators",
      "workers (processes × workers)",
      "cycles/s",
      "vs one Redis, same coordinators",
      "acquire p50 / p99 ms",
      "each coordinator's CPU (share of a core)",
      "contender processes' CPU (all; busiest)",
      "each master's CPU",
      "busiest process",
      "lock ops/s per coordinator core",
      "lock ops/s per Redis core (masters summed)",
    ],
    rows.map((r) => {
      const ops = r.result.cyclesPerS * 2;
      const coordinatorCores = r.result.coordinatorCores.reduce((a, b) => a + b, 0);
      const masterCores = r.masterCores.reduce((a, b) => a + b, 0);
      const same = single?.find((x) => x.coordinators === r.coordinators)?.result.cyclesPerS;
      return [
        String(r.coordinators),
        String(r.workers),
        count(r.result.cyclesPerS),
        ratio(same ? r.result.cyclesPerS / same : undefined),
        `${ms(r.result.acquire.p50Ms)} / ${ms(r.result.acquire.p99Ms)}`,
        r.result.coordinatorCores.map((c) => pct(c, 0)).join(", "),
        `${pct(r.result.clientCores, 0)}; ${pct(r.result.clientCoresMax, 0)}`,
        r.masterCores.map((c) => pct(c, 0)).join(", "),
        `${r.busiest.process} (${pct(r.busiest.cores, 0)})`,
        count(ops / coordinatorCores),
        count(ops / masterCores),
      ];
    }),
  );
}

/**
 * The shapes section of BENCHMARKS.md: what the process and Redisson rows are, and the scale-out
 * table with the sizing it implies (lock operations per second per coordinator core and per Redis core).
 */
export function shapesSection(
  scaleOut: ScaleOutRow[] | undefined,
  cores: number,
  clusterScaleOut?: ClusterScaleOutRow[],
): string {
  const out = [
    "## 4. Shapes users run",
    "",
    "*Each contender its own process*: the hand-off (8) and spread (16) workloads with every contender in a",
    "process of its own, running the compiled client package (`packages/client/dist`, published as turnstile-locks-client) under plain node (`bench/shapes/contender-process.mjs`),",
    "as services are deployed. The bench process keeps the hand-off board over IPC; gaps come from the",
    "contenders' own timestamps on the shared monotonic clock, so the board's messages are outside them; client",
    "CPU is the contender processes' summed. Their rows are in the tables above.",
    "",
    "*Redisson*: `bench/redisson/` (Maven, Redisson from Maven Central) runs the same hand-off (in both",
    "disciplines) and spread workloads with `RFairLock` (FIFO: the row Turnstile is compared with) and `RLock`",
    "(not FIFO, shown apart: what giving up FIFO buys), one shared client, one thread per contender, each",
    "configuration warmed up unmeasured first; client CPU is the JVM's. It runs when `java` and `mvn` are on PATH.",
    "",
  ];
  const cluster = clusterSection(clusterScaleOut, scaleOut, cores);
  if (!scaleOut?.length) return [...out, "The scale-out was not run in this invocation.", ...cluster].join("\n");
  const best = scaleOut.map(sizingOf);
  const first = best[0];
  out.push(
    "### Scale-out: coordinators on one Redis",
    "",
    `Spread workers in 4 contender processes, round robin over 1, 2 and 4 coordinator processes on one Redis, all`,
    `on this ${cores}-core machine (so more processes also means less CPU for each). CPU is each process's over the`,
    "window (/proc, Redis INFO); a lock operation is an acquire or a release (a cycle is two).",
    "",
    scaleOutTable(scaleOut),
    "",
    `With one coordinator, a coordinator core served ${count(first.opsPerCoordinatorCore)} lock operations/s and a Redis core`,
    `${count(first.opsPerRedisCore)}; the busiest process was ${scaleOut[0].busiest.process} (${pct(scaleOut[0].busiest.cores, 0)} of a core).`,
    ...cluster,
  );
  return out.join("\n");
}

function clusterSection(rows: ClusterScaleOutRow[] | undefined, single: ScaleOutRow[] | undefined, cores: number) {
  if (!rows?.length) return ["", "The Cluster scale-out was not run in this invocation."];
  return [
    "",
    `### Scale-out: coordinators on a Redis Cluster of ${rows[0].masters} masters`,
    "",
    "The same spread workers (each on a lock of its own, so the names hash over every master's slots) round",
    `robin over 1, 2 and 4 coordinators started with \`--redis-cluster\` (no replicas, \`--redis-replica-acks off\`,`,
    `as the single Redis above), on the same ${cores}-core machine as everything else. "vs one Redis" compares`,
    "with the table above at the same number of coordinators.",
    "",
    clusterScaleOutTable(rows, single),
  ];
}
