import type { Redis } from "ioredis";
import { type AnatomyResult, runAnatomy } from "./anatomy/run-anatomy.js";
import type { BenchCoordinator } from "./env/coordinator-process.js";
import type { LockImpl } from "./impls/lock-impl.js";
import type { BenchOptions } from "./options.js";
import { Progress } from "./progress.js";
import type { ClusterScaleOutRow } from "./shapes/cluster-scale-out.js";
import { runShapes } from "./shapes/run-shapes.js";
import type { ScaleOutRow } from "./shapes/scale-out.js";
import { type Discipline, type HandOffResult, runHandOff } from "./workloads/hand-off.js";
import { type FleetResult, runIdleFleet } from "./workloads/idle-fleet.js";
import { mergeHandOffRounds, mergeSpreadRounds } from "./workloads/merge-rounds.js";
import { measureRoundTrips, type RoundTrips } from "./workloads/round-trips.js";
import { runSpread, type SpreadResult } from "./workloads/spread.js";

/** Every result of one run, per workload size, one entry per implementation that ran. */
export interface BenchResults {
  /** Bare round trips measured first: the floor under every lock operation. */
  roundTrips?: RoundTrips;
  /** The legs of a hand-off and of an uncontended acquire, and the bare floors beside them. */
  anatomy?: AnatomyResult;
  /** One entry per contender count and discipline, in that order. */
  handOff: { contenders: number; discipline: Discipline; results: HandOffResult[] }[];
  spread: { workers: number; results: SpreadResult[] }[];
  fleet?: FleetResult;
  /** Spread workers in processes over 1, 2 and 4 coordinators on one Redis. */
  scaleOut?: ScaleOutRow[];
  /** The same over 1, 2 and 4 coordinators on a Redis Cluster of 3 masters. */
  clusterScaleOut?: ClusterScaleOutRow[];
  /** Report labels of the rows run outside LockImpl.connect (contender processes, Redisson). */
  extraImpls?: LockImpl[];
}

/** What the plan needs: options, implementations, the counter connection, server processes. */
export interface PlanContext {
  options: BenchOptions;
  impls: LockImpl[];
  redis: Redis;
  /** The URL of that Redis (the anatomy starts its own coordinator on it). */
  redisUrl: string;
  serverPids: Record<string, number | undefined>;
  coordinator: BenchCoordinator;
  /** Notes for the report (skips, failures), appended to. */
  notes: string[];
}

/**
 * Runs the workloads in order: hand-off and spread at each size, every implementation once per
 * round with the order reversed on odd rounds (so slow drifts in machine load hit all alike),
 * then the idle fleet. A run that throws is noted and left out; the others go on.
 */
export async function runPlan(ctx: PlanContext): Promise<BenchResults> {
  const { options, impls, notes } = ctx;
  const sizes = options.handOffContenders.length * options.disciplines.length + options.spreadWorkers.length;
  const fleet = options.fleet && impls.some((i) => i.id === "turnstile") ? options.fleet : null;
  const anatomy = options.anatomy && impls.some((i) => i.id === "turnstile");
  const shapes = options.shapes && impls.some((i) => i.id === "turnstile");
  const steps = 1 + (anatomy ? 1 : 0) + sizes * options.rounds * impls.length + (shapes ? 6 : 0) + (fleet ? 1 : 0);
  const progress = new Progress(steps);
  const results: BenchResults = { handOff: [], spread: [] };
  progress.begin("round trips: Redis PING, coordinator keepalive");
  results.roundTrips = await measureRoundTrips(ctx.redis, ctx.coordinator.address, options.quick ? 500 : 2000);
  const rt = results.roundTrips;
  progress.done(
    `Redis PING p50 ${rt.redisPing.p50Ms.toFixed(3)} ms, keepalive p50 ${rt.coordinatorKeepAlive.p50Ms.toFixed(3)} ms`,
  );
  if (anatomy) {
    progress.begin("anatomy of a hand-off (wire marks) and the bare floors");
    try {
      results.anatomy = await runAnatomy({
        redisUrl: ctx.redisUrl,
        contenders: 8,
        disciplines: options.disciplines,
        warmupMs: options.warmupMs,
        measureMs: options.measureMs,
        floorTrips: options.quick ? 1000 : 3000,
        progress: (d) => progress.update(d),
      });
      const a = results.anatomy;
      progress.done(
        `hand-off whole trip p50 ${a.handOffs.map((h) => `${(h.chain.total.p50Ms * 1000).toFixed(0)} µs (${h.discipline})`).join(", ")}, echo + EVALSHA floor p50 ${(a.floors.grpcEchoEval.roundTrip.p50Ms * 1000).toFixed(0)} µs`,
      );
    } catch (err) {
      notes.push(`The anatomy failed: ${(err as Error).message}`);
      progress.done(`failed: ${(err as Error).message}`);
    }
  }
  const common = (impl: LockImpl) => ({
    warmupMs: options.warmupMs,
    measureMs: options.measureMs,
    sources: {
      redis: impl.wireCommands ? ctx.redis : undefined,
      wireCommands: impl.wireCommands,
      serverPid: ctx.serverPids[impl.id],
    },
    progress: (detail: string) => progress.update(detail),
  });

  for (const contenders of options.handOffContenders) {
    for (const discipline of options.disciplines) {
      const label = `hand-off, ${contenders} contenders, ${discipline}`;
      const rounds = await inRounds(ctx, progress, label, (impl) =>
        runHandOff(impl, { ...common(impl), contenders, discipline }),
      );
      const merged = impls.flatMap((impl) => {
        const r = rounds.get(impl.id);
        return r?.length ? [mergeHandOffRounds(r)] : [];
      });
      for (const r of merged)
        if (r.violations > 0) notes.push(`${r.impl} (${label}): ${r.violations} exclusion violations!`);
      results.handOff.push({ contenders, discipline, results: merged });
    }
  }
  for (const workers of options.spreadWorkers) {
    const rounds = await inRounds(ctx, progress, `spread, ${workers} workers`, (impl) =>
      runSpread(impl, { ...common(impl), workers }),
    );
    const merged = impls.flatMap((impl) => {
      const r = rounds.get(impl.id);
      return r?.length ? [mergeSpreadRounds(r)] : [];
    });
    results.spread.push({ workers, results: merged });
  }
  if (shapes) {
    const turnstile = { redisUrl: ctx.redisUrl, redis: ctx.redis, coordinator: ctx.coordinator };
    const added = await runShapes({ options, ...turnstile, ...results, notes, progress });
    results.extraImpls = added.impls;
    results.scaleOut = added.scaleOut;
    results.clusterScaleOut = added.clusterScaleOut;
  }
  if (fleet) {
    progress.begin(`idle fleet, ${fleet.sessions} sessions × ${fleet.locksPerSession} locks`);
    results.fleet = await runFleetScalingDown(ctx, fleet, progress);
    const f = results.fleet;
    if (f)
      progress.done(
        `${f.renewScriptsPerS.toFixed(0)} renewal scripts/s, keepalive RTT p99 ${f.rtt.p99Ms.toFixed(1)} ms`,
      );
    else progress.done("failed at every size (see the notes)");
  }
  return results;
}

/**
 * Runs the idle fleet; when the coordinator cannot keep up (a session failed or lost a lock), it
 * notes why, flushes Redis and tries again with half the sessions, down to 1/8 of the size asked.
 */
async function runFleetScalingDown(
  ctx: PlanContext,
  fleet: NonNullable<BenchOptions["fleet"]>,
  progress: Progress,
): Promise<FleetResult | undefined> {
  for (let sessions = fleet.sessions; sessions >= fleet.sessions / 8; sessions = Math.floor(sessions / 2)) {
    const size = `${sessions} sessions × ${fleet.locksPerSession} locks (TTL ${fleet.ttlMs / 1000} s)`;
    try {
      const f = await runIdleFleet({
        ...fleet,
        sessions,
        address: ctx.coordinator.address,
        redis: ctx.redis,
        coordinatorPid: ctx.coordinator.pid,
        progress: (d) => progress.update(`${size}: ${d}`),
      });
      if (f.failures === 0 && f.lost === 0) return f;
      ctx.notes.push(`Idle fleet of ${size}: ${f.failures} failures, ${f.lost} locks lost (${f.lastFailure ?? ""}).`);
    } catch (err) {
      ctx.notes.push(`Idle fleet of ${size} could not be set up: ${(err as Error).message}.`);
    }
    ctx.notes.push(`The fleet was scaled down to ${Math.floor(sessions / 2)} sessions and run again.`);
    await ctx.redis.flushall();
  }
  return undefined;
}

async function inRounds<R extends { impl: string }>(
  ctx: PlanContext,
  progress: Progress,
  label: string,
  run: (impl: LockImpl) => Promise<R>,
): Promise<Map<string, R[]>> {
  const out = new Map<string, R[]>();
  for (let round = 0; round < ctx.options.rounds; round++) {
    const order = round % 2 === 0 ? ctx.impls : [...ctx.impls].reverse();
    for (const impl of order) {
      progress.begin(`${label}, ${impl.label}, round ${round + 1}/${ctx.options.rounds}`);
      try {
        const r = await run(impl);
        out.set(impl.id, [...(out.get(impl.id) ?? []), r]);
        progress.done(describe(r));
      } catch (err) {
        ctx.notes.push(`${impl.label}, ${label}, round ${round + 1}: failed: ${(err as Error).message}`);
        progress.done(`failed: ${(err as Error).message}`);
      }
    }
  }
  return out;
}

function describe(r: unknown): string {
  if (typeof r === "object" && r && "handOffsPerS" in r) {
    const h = r as HandOffResult;
    return `${h.handOffsPerS.toFixed(0)} hand-offs/s, gap mean ${h.gap.meanMs.toFixed(3)} ms, p99 ${h.gap.p99Ms.toFixed(2)} ms`;
  }
  const s = r as SpreadResult;
  return `${s.cyclesPerS.toFixed(0)} cycles/s, acquire p50 ${s.acquire.p50Ms.toFixed(2)} ms, p99 ${s.acquire.p99Ms.toFixed(2)} ms`;
}
