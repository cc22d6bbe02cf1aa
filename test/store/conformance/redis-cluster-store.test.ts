import { Redis } from "ioredis";
import { RedisStore } from "../../../server/store/redis/redis-store.js";
import { startRedisCluster, type TestRedisCluster } from "../../harness/redis-cluster.js";
import { storeConformance } from "./store-conformance.js";

let cluster: TestRedisCluster | undefined;
let admins: Redis[] = [];
let barrier: Redis[] = [];
let round = 0;

const BARRIER = "conformance:bus-barrier";

/**
 * Waits until a marker PUBLISHed on every node has reached a subscriber on every node. The cluster
 * bus keeps each node pair's messages in order, so an event published during the previous test
 * (Cluster stores always publish) can no longer reach the next test's watch.
 */
async function drainClusterBus(): Promise<void> {
  const marker = String(++round);
  const seen = barrier.map(
    (sub) =>
      new Promise<void>((resolve, reject) => {
        let count = 0;
        const timer = setTimeout(() => reject(new Error("cluster bus barrier: markers did not arrive in 5 s")), 5000);
        const onMessage = (_channel: string, message: string) => {
          if (message !== marker || ++count < admins.length) return;
          clearTimeout(timer);
          sub.off("message", onMessage);
          resolve();
        };
        sub.on("message", onMessage);
      }),
  );
  await Promise.all(admins.map((a) => a.publish(BARRIER, marker)));
  await Promise.all(seen);
}

// The same suite on a 3-master Redis Cluster: every lock's keys share one slot, grants to another
// store's waiters travel by classic PUBLISH, which the cluster bus carries to every node.
storeConformance(
  "redis cluster",
  (options) => new RedisStore({ target: { kind: "cluster", nodes: cluster!.nodes }, ...options }),
  {
    async before() {
      cluster = await startRedisCluster(3);
      admins = cluster.nodes.map((n) => new Redis(n));
      barrier = cluster.nodes.map((n) => new Redis(n));
      await Promise.all(barrier.map((b) => b.subscribe(BARRIER)));
    },
    async beforeEach() {
      await Promise.all(admins.map((a) => a.flushall()));
      await drainClusterBus();
    },
    async after() {
      for (const c of [...admins, ...barrier]) c.disconnect();
      await cluster?.stop();
    },
  },
);
