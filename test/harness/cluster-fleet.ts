import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster } from "ioredis";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { type ClusterGroup, startClusterGroup } from "./cluster-group.js";
import type { CoordinatorProcess } from "./coordinator-process.js";
import { spawnLoggedCoordinators } from "./failover-fleet.js";

/**
 * What the Cluster fault tests share: a Cluster of masters with a replica each, an admin client,
 * and coordinators with majority-acknowledged writes whose output goes to `logDir`.
 */
export interface ClusterFleet {
  group: ClusterGroup;
  admin: Cluster;
  coordinators: CoordinatorProcess[];
  logDir: string;
  /** The slot of `name`'s keys and the port of the master serving it now. */
  placeOf(name: string): Promise<{ slot: number; port: number }>;
  /** Kills the coordinators, closes the admin client and stops the Cluster. */
  stop(): Promise<void>;
}

/** Starts `masters` masters (a replica each) and `coordinators` logged coordinators, logs under a `logPrefix` temp dir. */
export async function startClusterFleet(
  masters: number,
  nodeTimeoutMs: number,
  coordinators: number,
  logPrefix: string,
): Promise<ClusterFleet> {
  const logDir = mkdtempSync(join(tmpdir(), logPrefix));
  const group = await startClusterGroup(masters, nodeTimeoutMs);
  const admin = new Cluster(group.nodes);
  admin.on("error", () => {});
  const nodes = group.nodes.map((n) => `${n.host}:${n.port}`).join(",");
  let started: CoordinatorProcess[] = [];
  try {
    started = await spawnLoggedCoordinators(
      coordinators,
      ["--redis-cluster", nodes, "--redis-replica-acks", "majority"],
      logDir,
    );
  } catch (err) {
    admin.disconnect();
    await group.stop();
    throw err;
  }
  return {
    group,
    admin,
    coordinators: started,
    logDir,
    async placeOf(name) {
      const slot = Number(await admin.cluster("KEYSLOT", lockKeys("turnstile", name)[0]));
      const range = (await admin.cluster("SLOTS")).find(([from, to]) => from <= slot && slot <= to);
      if (!range) throw new Error(`no master serves slot ${slot}`);
      return { slot, port: range[2][1] };
    },
    async stop() {
      await Promise.all(started.map((c) => c.kill()));
      admin.disconnect();
      await group.stop();
    },
  };
}
