import type { Redis } from "ioredis";
import { ensureCompiled } from "../env/compiled-build.js";
import type { BenchCoordinator } from "../env/coordinator-process.js";
import type { LockImpl } from "../impls/lock-impl.js";
import type { BenchOptions } from "../options.js";
import type { Progress } from "../progress.js";
import type { Discipline, HandOffResult } from "../workloads/hand-off.js";
import type { SpreadResult } from "../workloads/spread.js";
import { type ClusterScaleOutRow, runClusterScaleOut } from "./cluster-scale-out.js";
import { runProcessHandOff } from "./process-hand-off.js";
import { runProcessSpread } from "./process-spread.js";
import { REDISSON_IMPLS, redissonUnavailable, runRedisson } from "./redisson-runner.js";
import { runScaleOut, type ScaleOutRow } from "./scale-out.js";

/** The label of the rows whose contenders each run in a process of their own. */
export const PROCESS_IMPL: LockImpl = {
  id: "turnstile-processes",
  label: "Turnstile (each contender its own process, compiled client)",
  waits: "FIFO queue in Redis; the grant is pushed on the session stream",
  version: "this repo (compiled client package, plain node)",
  connect: () => Promise.reject(new Error("runs in contender processes (bench/shapes)")),
};

/** What the shapes add to a run: rows for the existing tables, and the scale-out table. */
export interface ShapesContext {
  options: BenchOptions;
  redisUrl: string;
  redis: Redis;
  coordinator: BenchCoordinator;
  handOff: { contenders: number; discipline: Discipline; results: HandOffResult[] }[];
  spread: { workers: number; results: SpreadResult[] }[];
  notes: string[];
  progress: Progress;
}

/**
 * The shapes users run, after the one-process rows: contenders each in their own process (hand-off
 * with 8, spread with 16), Redisson's RLock and RFairLock in a warmed JVM (skipped, with the reason,
 * without java or mvn), and the scale-out over 1, 2 and 4 coordinators on one Redis and on a Redis Cluster of
 * 3 masters. With `scaleOutOnly` only the two scale-outs run. Returns the report labels of the rows added,
 * and the scale-out rows.
 */
export async function runShapes(
  ctx: ShapesContext,
): Promise<{ impls: LockImpl[]; scaleOut?: ScaleOutRow[]; clusterScaleOut?: ClusterScaleOutRow[] }> {
  const { options, progress, notes } = ctx;
  const impls: LockImpl[] = [];
  const window = { warmupMs: options.warmupMs, measureMs: options.measureMs * options.rounds };
  const step = async <T>(label: string, run: () => Promise<T>, describe: (r: T) => string) => {
    progress.begin(label);
    try {
      const r = await run();
      progress.done(describe(r));
      return r;
    } catch (err) {
      notes.push(`${label}: failed: ${(err as Error).message}`);
      progress.done(`failed: ${(err as Error).message}`);
      return undefined;
    }
  };
  const built = await step(
    "npm run build (the contender processes run the compiled client)",
    async () => (ensureCompiled() === "fresh" ? "the compiled client is newer than its sources: not rebuilt" : "built"),
    (r) => r,
  );
  // Contenders in processes release after the board's message and a turn: the after-turn table.
  const h8 = ctx.handOff.find((h) => h.contenders === 8 && h.discipline === "after-turn");
  const s16 = ctx.spread.find((s) => s.workers === 16);
  const sources = { redis: ctx.redis, wireCommands: ["evalsha", "eval"], serverPid: ctx.coordinator.pid };
  if (built && h8 && !options.scaleOutOnly) {
    const r = await step(
      "hand-off, 8 contenders, each its own process",
      () =>
        runProcessHandOff({
          address: ctx.coordinator.address,
          contenders: 8,
          ...window,
          sources,
          progress: (d) => progress.update(d),
        }),
      (r) => `${r.handOffsPerS.toFixed(0)} hand-offs/s, gap mean ${r.gap.meanMs.toFixed(3)} ms`,
    );
    if (r) h8.results.push(r);
  }
  if (built && s16 && !options.scaleOutOnly) {
    const r = await step(
      "spread, 16 workers, each its own process",
      () =>
        runProcessSpread({
          addresses: [ctx.coordinator.address],
          coordinatorPids: [ctx.coordinator.pid],
          processes: 16,
          workersPerProcess: 1,
          ...window,
          sources,
          progress: (d) => progress.update(d),
        }),
      (r) => `${r.cyclesPerS.toFixed(0)} cycles/s`,
    );
    if (r) s16.results.push(r);
  }
  if (built && !options.scaleOutOnly) impls.push(PROCESS_IMPL);
  const skip = options.scaleOutOnly ? undefined : redissonUnavailable();
  if (options.scaleOutOnly) progress.note("bench: --scale-out-only: no process or Redisson rows");
  else if (skip) {
    notes.push(`${skip}.`);
    progress.note(`bench: ${skip}`);
  } else {
    const warmupMs = Math.max(options.quick ? 2000 : 5000, options.warmupMs);
    const r = await step(
      "Redisson RLock and RFairLock (Java harness, warmed JVM)",
      () =>
        runRedisson(ctx.redisUrl, {
          warmupMs,
          measureMs: window.measureMs,
          // --quick: the targets' sizes only.
          handOff: [...new Set(ctx.handOff.map((h) => h.contenders))].filter((n) => !options.quick || n === 8),
          spread: ctx.spread.map((s) => s.workers).filter((n) => !options.quick || n === 16),
          disciplines: options.disciplines,
        }),
      (r) => `${r.handOff.length + r.spread.length} rows`,
    );
    if (r) {
      for (const row of r.handOff)
        ctx.handOff.find((h) => h.contenders === row.contenders && h.discipline === row.discipline)?.results.push(row);
      for (const row of r.spread) ctx.spread.find((s) => s.workers === row.workers)?.results.push(row);
      impls.push(...REDISSON_IMPLS);
    }
  }
  const scaleOut = built
    ? await step(
        "scale-out: 64 spread workers over 1, 2 and 4 coordinators",
        () =>
          runScaleOut({
            redisUrl: ctx.redisUrl,
            redis: ctx.redis,
            first: ctx.coordinator,
            sizes: [1, 2, 4],
            processes: 4,
            workersPerProcess: 16,
            ...window,
            progress: (d) => progress.update(d),
          }),
        (rows) => rows.map((x) => `${x.coordinators}: ${x.result.cyclesPerS.toFixed(0)}/s`).join(", "),
      )
    : undefined;
  const clusterScaleOut = built
    ? await step(
        "scale-out on a Redis Cluster: 64 spread workers over 1, 2 and 4 coordinators, 3 masters",
        () =>
          runClusterScaleOut({
            masters: 3,
            sizes: [1, 2, 4],
            processes: 4,
            workersPerProcess: 16,
            ...window,
            progress: (d) => progress.update(d),
          }),
        (rows) => rows.map((x) => `${x.coordinators}: ${x.result.cyclesPerS.toFixed(0)}/s`).join(", "),
      )
    : undefined;
  return { impls, scaleOut, clusterScaleOut };
}
