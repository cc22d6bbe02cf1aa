import { randomBytes } from "node:crypto";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { credentials } from "@grpc/grpc-js";
import type { Redis } from "ioredis";
import { LockServiceClient } from "../../gen/ts/turnstile/v1/turnstile.js";
import { RENEW_LOCKS_PER_SCRIPT } from "../../server/store/redis/scripts/renew.js";
import { processUsage } from "../env/process-usage.js";
import { type RedisDelta, redisDelta, redisSnapshot } from "../env/redis-counters.js";
import { type LatencySummary, summarize } from "../stats.js";
import { FleetSession, type FleetTally } from "./fleet-session.js";

/** Settings of the idle-fleet run. */
export interface FleetOptions {
  address: string;
  sessions: number;
  locksPerSession: number;
  ttlMs: number;
  /** Client connections the sessions are spread over (as if from that many hosts). */
  connections: number;
  measureMs: number;
  redis: Redis;
  coordinatorPid: number;
  progress: (detail: string) => void;
}

/** What the idle fleet cost while it only renewed. */
export interface FleetResult {
  sessions: number;
  locks: number;
  ttlMs: number;
  setupSeconds: number;
  seconds: number;
  coordinatorRssBeforeBytes?: number;
  coordinatorRssBytes?: number;
  coordinatorCpuPct?: number;
  redisCpuPct: number;
  redisUsedMemoryBytes: number;
  redis: RedisDelta;
  keepAlivesPerS: number;
  /**
   * Renewal scripts per second, and what one per keepalive (3 × sessions / TTL, on one Redis: all of a
   * session's locks in one script, docs/data-model.md) predicts.
   */
  renewScriptsPerS: number;
  predictedRenewScriptsPerS: number;
  /** Locks renewed per second: 3 × locks / TTL. */
  renewedLocksPerS: number;
  redisCommandsPerS: number;
  rtt: LatencySummary;
  rttMs: number[];
  /** Event-loop delay p99 of this (the sessions') process during the window: its share of the round trip. */
  clientLoopDelayP99Ms: number;
  lost: number;
  failures: number;
  lastFailure?: string;
}

const SETUP_CONCURRENCY = 50;

/**
 * S sessions each holding L locks (S × L distinct names) and doing nothing but keepalives every
 * TTL/3. After all are held and one full keepalive period has passed, it measures for a window:
 * coordinator CPU and RSS, Redis ops/s and CPU, keepalive round trips.
 */
export async function runIdleFleet(o: FleetOptions): Promise<FleetResult> {
  const rssBefore = processUsage(o.coordinatorPid)?.rssBytes;
  const channelOptions = { "grpc.use_local_subchannel_pool": 1 };
  const rpcs = Array.from(
    { length: o.connections },
    () => new LockServiceClient(o.address, credentials.createInsecure(), channelOptions),
  );
  const tally: FleetTally = { rttMs: [], recording: false, acks: 0, lost: 0, failures: 0 };
  const prefix = `fleet-${randomBytes(4).toString("hex")}`;
  const sessions: FleetSession[] = [];
  const setupStart = performance.now();
  try {
    for (let next = 0; next < o.sessions; ) {
      const batch = Math.min(SETUP_CONCURRENCY, o.sessions - next);
      await Promise.all(
        Array.from({ length: batch }, async (_, k) => {
          const s = next + k;
          const session = new FleetSession(rpcs[s % rpcs.length], o.ttlMs, tally);
          sessions.push(session);
          const names = Array.from({ length: o.locksPerSession }, (_, l) => `${prefix}/${s}/${l}`);
          await session.start(names);
          session.keepAlive(Math.random() * (o.ttlMs / 3));
        }),
      );
      next += batch;
      o.progress(`set up ${next}/${o.sessions} sessions (${next * o.locksPerSession} locks held)`);
    }
    const setupSeconds = (performance.now() - setupStart) / 1000;
    // One full keepalive period first, so every session's renewals are in their steady phase.
    await progressSleep(o.ttlMs / 3, (ms) => o.progress(`settling ${(ms / 1000).toFixed(1)} s`));
    const redisBefore = await redisSnapshot(o.redis);
    const coordBefore = processUsage(o.coordinatorPid);
    const acksBefore = tally.acks;
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const startedAt = performance.now();
    tally.recording = true;
    await progressSleep(o.measureMs, (ms) => o.progress(`measuring ${(ms / 1000).toFixed(1)} s, ${tally.acks} acks`));
    tally.recording = false;
    loopDelay.disable();
    const seconds = (performance.now() - startedAt) / 1000;
    const coordAfter = processUsage(o.coordinatorPid);
    const redisAfter = await redisSnapshot(o.redis);
    const redis = redisDelta(redisBefore, redisAfter, ["evalsha", "eval"]);
    const locks = o.sessions * o.locksPerSession;
    return {
      sessions: o.sessions,
      locks,
      ttlMs: o.ttlMs,
      setupSeconds,
      seconds,
      coordinatorRssBeforeBytes: rssBefore,
      coordinatorRssBytes: coordAfter?.rssBytes,
      coordinatorCpuPct:
        coordBefore && coordAfter ? ((coordAfter.cpuSeconds - coordBefore.cpuSeconds) / seconds) * 100 : undefined,
      redisCpuPct: (redis.cpuSeconds / seconds) * 100,
      redisUsedMemoryBytes: redisAfter.usedMemoryBytes,
      redis,
      keepAlivesPerS: (tally.acks - acksBefore) / seconds,
      renewScriptsPerS: redis.wireCommands / seconds,
      predictedRenewScriptsPerS:
        (3 * o.sessions * Math.ceil(o.locksPerSession / RENEW_LOCKS_PER_SCRIPT)) / (o.ttlMs / 1000),
      renewedLocksPerS: (3 * locks) / (o.ttlMs / 1000),
      redisCommandsPerS: redis.commands / seconds,
      rtt: summarize(tally.rttMs),
      rttMs: tally.rttMs,
      clientLoopDelayP99Ms: loopDelay.percentile(99) / 1e6,
      lost: tally.lost,
      failures: tally.failures,
      lastFailure: tally.lastFailure,
    };
  } finally {
    o.progress("stopping sessions");
    for (const s of sessions) s.stop();
    for (const rpc of rpcs) rpc.close();
  }
}

async function progressSleep(ms: number, tick: (elapsedMs: number) => void): Promise<void> {
  const start = performance.now();
  for (let elapsed = 0; elapsed < ms; elapsed = performance.now() - start) {
    tick(elapsed);
    await sleep(Math.min(500, ms - elapsed));
  }
}
