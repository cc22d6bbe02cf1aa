import type { Redis } from "ioredis";
import { type BenchCoordinator, startCoordinator } from "../env/coordinator-process.js";
import { type ProcessSpreadResult, runProcessSpread } from "./process-spread.js";

/** One scale-out size: its coordinators, the aggregate rate and who was busiest. */
export interface ScaleOutRow {
  coordinators: number;
  workers: number;
  result: ProcessSpreadResult;
  /** The process with the largest share of a core over the window, and that share. */
  busiest: { process: string; cores: number };
}

/** Settings of the scale-out run. */
export interface ScaleOutOptions {
  redisUrl: string;
  redis: Redis;
  /** The bench's coordinator on that Redis (the first of the set); the others are started here. */
  first: BenchCoordinator;
  sizes: number[];
  processes: number;
  workersPerProcess: number;
  warmupMs: number;
  measureMs: number;
  progress: (detail: string) => void;
}

/**
 * Spread workers in contender processes against 1, 2, 4… coordinator processes on one Redis
 * (workers spread round robin): the aggregate cycles/s at each size, and the CPU of every
 * coordinator, of the contender processes and of Redis, to see which saturates first.
 */
export async function runScaleOut(o: ScaleOutOptions): Promise<ScaleOutRow[]> {
  const extra: BenchCoordinator[] = [];
  try {
    const most = Math.max(...o.sizes);
    for (let i = 1; i < most; i++) {
      o.progress(`starting coordinator ${i + 1}/${most}`);
      extra.push(await startCoordinator(o.redisUrl));
    }
    const all = [o.first, ...extra];
    const rows: ScaleOutRow[] = [];
    for (const size of o.sizes) {
      const set = all.slice(0, size);
      const result = await runProcessSpread({
        addresses: set.map((c) => c.address),
        coordinatorPids: set.map((c) => c.pid),
        processes: o.processes,
        workersPerProcess: o.workersPerProcess,
        warmupMs: o.warmupMs,
        measureMs: o.measureMs,
        sources: { redis: o.redis, wireCommands: ["evalsha", "eval"], serverPid: o.first.pid },
        progress: (d) => o.progress(`${size} coordinator(s): ${d}`),
      });
      rows.push({ coordinators: size, workers: o.processes * o.workersPerProcess, result, busiest: busiest(result) });
    }
    return rows;
  } finally {
    for (const c of extra) await c.stop();
  }
}

/** The busiest process of a run: a coordinator, a contender process or Redis. */
export function busiest(r: Pick<ProcessSpreadResult, "coordinatorCores" | "clientCoresMax" | "redisCores">): {
  process: string;
  cores: number;
} {
  const candidates = [
    ...r.coordinatorCores.map((cores, i) => ({ process: `coordinator ${i + 1}`, cores })),
    { process: "a contender process", cores: r.clientCoresMax },
    { process: "Redis", cores: r.redisCores ?? Number.NaN },
  ].filter((c) => Number.isFinite(c.cores));
  return candidates.reduce((a, b) => (b.cores > a.cores ? b : a));
}
