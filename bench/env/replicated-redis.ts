import { Redis } from "ioredis";
import { startRedis, type TestRedis } from "../../test/harness/redis-server.js";

/** A master with `replicas` replicas on free loopback ports, for the majority-acked Turnstile row. */
export interface ReplicatedRedis {
  master: TestRedis;
  replicas: TestRedis[];
  stop(): Promise<void>;
}

/** Starts the master and its replicas and resolves once every replica is online (synced). */
export async function startReplicatedRedis(replicas: number): Promise<ReplicatedRedis> {
  const master = await startRedis();
  const started: TestRedis[] = [];
  const stop = async () => {
    await Promise.all([...started, master].map((r) => r.stop()));
  };
  try {
    for (let i = 0; i < replicas; i++)
      started.push(await startRedis({ args: ["--replicaof", "127.0.0.1", String(master.port)] }));
    const admin = new Redis(master.url);
    try {
      const giveUpAt = Date.now() + 30_000;
      while ((await admin.info("replication")).match(/^slave\d+:.*state=online/gm)?.length !== replicas) {
        if (Date.now() > giveUpAt) throw new Error(`bench: ${replicas} replicas did not come online within 30 s`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      admin.disconnect();
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { master, replicas: started, stop };
}
