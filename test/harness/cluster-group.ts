import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./free-port.js";
import { startRedis, type TestRedis } from "./redis-server.js";
import { notYetOnError, until } from "./until.js";

/** One line of CLUSTER NODES, as the cluster sees a node. */
export interface ClusterNodeView {
  id: string;
  port: number;
  flags: string[];
  masterId: string;
  epoch: number;
  slots: boolean;
}

/**
 * A Redis Cluster of masters with one replica each on free loopback ports, for failover fault
 * tests: `killMaster` SIGKILLs a master, waits for its replica to take over, and restarts the dead
 * node (same port, same nodes.conf), which rejoins as the new master's replica.
 */
export interface ClusterGroup {
  nodes: { host: string; port: number }[];
  /** The cluster as the node on `port` (default: any live one) sees it. */
  view(port?: number): Promise<ClusterNodeView[]>;
  /** Resolves once every live node reports cluster_state:ok and every master has an online replica. */
  settled(): Promise<void>;
  /** SIGKILLs the master on `port` (default: a random one); `promotedAt` is when its replica was master. */
  killMaster(port?: number): Promise<{ killed: number; promoted: number; promotedAt: bigint }>;
  /**
   * SIGSTOPs the master on `port` (default: a random one; a VM pause, a stalled process) until its
   * replica took over (`promotedAt`), then SIGCONTs it: it wakes up a master of no slots, and the
   * cluster makes it the new master's replica.
   */
  freezeMaster(port?: number): Promise<{ frozen: number; promoted: number; promotedAt: bigint }>;
  stop(): Promise<void>;
}

const NO_DELAY = ["--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"];

/** Starts `masters` masters and one replica each, joined by `redis-cli --cluster create --cluster-replicas 1`. */
export async function startClusterGroup(masters: number, nodeTimeoutMs: number): Promise<ClusterGroup> {
  const dir = mkdtempSync(join(tmpdir(), "turnstile-cluster-group-"));
  const nodes = new Map<number, TestRedis>();
  const start = async (port: number) => {
    const args = ["--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`, ...NO_DELAY];
    args.push("--cluster-node-timeout", String(nodeTimeoutMs), "--dbfilename", `dump-${port}.rdb`);
    nodes.set(port, await startRedis({ port, dir, args }));
  };
  const stop = async () => {
    await Promise.all([...nodes.values()].map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  const view = async (port?: number): Promise<ClusterNodeView[]> => {
    const at = port ?? [...nodes.entries()].find(([, n]) => n.process.exitCode === null)?.[0];
    const redis = new Redis({ port: at, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0 });
    redis.on("error", () => {});
    try {
      await redis.connect();
      return String(await redis.call("CLUSTER", "NODES"))
        .trim()
        .split("\n")
        .map((line) => {
          const f = line.trim().split(" ");
          return {
            id: f[0],
            port: Number(f[1].split("@")[0].split(":")[1]),
            flags: f[2].split(","),
            masterId: f[3],
            epoch: Number(f[6]),
            slots: f.length > 8,
          };
        });
    } finally {
      redis.disconnect();
    }
  };
  const info = async (port: number, section: string): Promise<string> => {
    const redis = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0 });
    redis.on("error", () => {});
    try {
      await redis.connect();
      return section === "cluster" ? String(await redis.call("CLUSTER", "INFO")) : await redis.info(section);
    } finally {
      redis.disconnect();
    }
  };
  const settled = () =>
    until(
      notYetOnError(async () => {
        for (const port of nodes.keys()) if (!/cluster_state:ok/.test(await info(port, "cluster"))) return false;
        // Every node's view: no failure flags, and each master with slots has a replica.
        for (const port of nodes.keys()) {
          const seen = await view(port);
          if (seen.some((n) => n.flags.some((f) => f === "fail" || f === "fail?"))) return false;
          const live = seen.filter((n) => n.flags.includes("master") && n.slots);
          if (live.length !== masters || live.some((m) => !seen.some((r) => r.masterId === m.id))) return false;
          for (const m of live) if (!/slave0:.*state=online/.test(await info(m.port, "replication"))) return false;
        }
        return true;
      }),
      "every master to have an online replica and every node cluster_state:ok",
      60_000,
      100,
    );
  /** The master on `port` (default: a random one) and its replica. */
  const pick = async (port?: number) => {
    const before = await view();
    const candidates = before.filter((n) => n.flags.includes("master") && n.slots);
    const victim = candidates.find((n) => n.port === port) ?? candidates[Math.floor(Math.random() * candidates.length)];
    // The master's own view knows its replicas first.
    const replica = (await view(victim.port)).find((n) => n.masterId === victim.id);
    if (!replica) throw new Error(`master ${victim.port} has no replica`);
    return { victim, replica };
  };
  /** Waits until `replica` is a master and its cluster is ok again; returns when it saw that. */
  const takeover = async (victim: ClusterNodeView, replica: ClusterNodeView) => {
    let promotedAt = 0n;
    await until(
      notYetOnError(async () => {
        const now = await view(replica.port);
        const me = now.find((n) => n.id === replica.id);
        if (!me?.flags.includes("master") || !/cluster_state:ok/.test(await info(replica.port, "cluster")))
          return false;
        promotedAt = process.hrtime.bigint();
        return true;
      }),
      `replica ${replica.port} to take over from ${victim.port}`,
      60_000,
      20,
    );
    return promotedAt;
  };
  try {
    for (let i = 0; i < masters * 2; i++) await start(await freePort());
    const create = spawnSync(
      "redis-cli",
      ["--cluster", "create", ...[...nodes.keys()].map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "1"],
      { encoding: "utf8", timeout: 30_000, input: "yes\n" },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${create.stdout}${create.stderr}`);
    await settled();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    nodes: [...nodes.keys()].map((port) => ({ host: "127.0.0.1", port })),
    view,
    settled,
    async killMaster(port) {
      const { victim, replica } = await pick(port);
      await nodes.get(victim.port)?.stop();
      const promotedAt = await takeover(victim, replica);
      await start(victim.port);
      return { killed: victim.port, promoted: replica.port, promotedAt };
    },
    async freezeMaster(port) {
      const { victim, replica } = await pick(port);
      const node = nodes.get(victim.port);
      node?.process.kill("SIGSTOP");
      try {
        const promotedAt = await takeover(victim, replica);
        return { frozen: victim.port, promoted: replica.port, promotedAt };
      } finally {
        node?.process.kill("SIGCONT");
      }
    },
    stop,
  };
}
