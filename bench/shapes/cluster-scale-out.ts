import { startRedisCluster } from "../../test/harness/redis-cluster.js";
import { type BenchCoordinator, startCoordinator } from "../env/coordinator-process.js";
import { type ProcessSpreadResult, runProcessSpread } from "./process-spread.js";

/** One size of the Cluster scale-out: its coordinators, the aggregate rate, each master's CPU, the busiest process. */
export interface ClusterScaleOutRow {
  masters: number;
  coordinators: number;
  workers: number;
  result: ProcessSpreadResult;
  /** CPU of each master over the window, as a share of one core. */
  masterCores: number[];
  /** The process with the largest share of a core over the window, and that share. */
  busiest: { process: string; cores: number };
}

/** Settings of the Cluster scale-out run. */
export interface ClusterScaleOutOptions {
  masters: number;
  sizes: number[];
  processes: number;
  workersPerProcess: number;
  warmupMs: number;
  measureMs: number;
  progress: (detail: string) => void;
}

/**
 * Spread workers in contender processes (each on a lock of its own, so the names hash over every
 * master's slots) against 1, 2, 4… coordinators on a Redis Cluster of `masters` masters without
 * replicas (`--redis-replica-acks off`, as the single-Redis row): the aggregate cycles/s at each size,
 * and the CPU of every coordinator, of the contender processes and of each master, to see which
 * saturates first. The Cluster is started here and stopped after.
 */
export async function runClusterScaleOut(o: ClusterScaleOutOptions): Promise<ClusterScaleOutRow[]> {
  o.progress(`starting a Redis Cluster of ${o.masters} masters`);
  const cluster = await startRedisCluster(o.masters);
  const coordinators: BenchCoordinator[] = [];
  try {
    const nodes = cluster.nodes.map((n) => `${n.host}:${n.port}`).join(",");
    const most = Math.max(...o.sizes);
    for (let i = 0; i < most; i++) {
      o.progress(`starting coordinator ${i + 1}/${most} on the Cluster`);
      coordinators.push(
        await startCoordinator(undefined, undefined, ["--redis-cluster", nodes, "--redis-replica-acks", "off"]),
      );
    }
    const masterPids = cluster.processes.map((p) => p.pid as number);
    const rows: ClusterScaleOutRow[] = [];
    for (const size of o.sizes) {
      const set = coordinators.slice(0, size);
      const result = await runProcessSpread({
        addresses: set.map((c) => c.address),
        coordinatorPids: set.map((c) => c.pid),
        processes: o.processes,
        workersPerProcess: o.workersPerProcess,
        warmupMs: o.warmupMs,
        measureMs: o.measureMs,
        sources: {},
        otherPids: masterPids,
        progress: (d) => o.progress(`Cluster, ${size} coordinator(s): ${d}`),
      });
      const masterCores = result.otherCores ?? [];
      rows.push({
        masters: o.masters,
        coordinators: size,
        workers: o.processes * o.workersPerProcess,
        result,
        masterCores,
        busiest: busiestOnCluster(result, masterCores),
      });
    }
    return rows;
  } finally {
    for (const c of coordinators) await c.stop();
    await cluster.stop();
  }
}

/** The busiest process of a Cluster run: a coordinator, a contender process or a master. */
export function busiestOnCluster(
  r: Pick<ProcessSpreadResult, "coordinatorCores" | "clientCoresMax">,
  masterCores: number[],
): { process: string; cores: number } {
  const candidates = [
    ...r.coordinatorCores.map((cores, i) => ({ process: `coordinator ${i + 1}`, cores })),
    { process: "a contender process", cores: r.clientCoresMax },
    ...masterCores.map((cores, i) => ({ process: `Redis master ${i + 1}`, cores })),
  ].filter((c) => Number.isFinite(c.cores));
  return candidates.reduce((a, b) => (b.cores > a.cores ? b : a));
}
