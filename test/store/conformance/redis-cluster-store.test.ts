import { Redis } from "ioredis";
import { RedisStore } from "../../../server/store/redis/redis-store.js";
import { startRedisCluster, type TestRedisCluster } from "../../harness/redis-cluster.js";
import { storeConformance } from "./store-conformance.js";

let cluster: TestRedisCluster | undefined;
let admins: Redis[] = [];

// The same suite on a 3-master Redis Cluster: every lock's keys share one slot, grants to another
// store's waiters travel by classic PUBLISH, which the cluster bus carries to every node.
storeConformance(
  "redis cluster",
  (options) => new RedisStore({ target: { kind: "cluster", nodes: cluster!.nodes }, ...options }),
  {
    async before() {
      cluster = await startRedisCluster(3);
      admins = cluster.nodes.map((n) => new Redis(n));
    },
    async beforeEach() {
      await Promise.all(admins.map((a) => a.flushall()));
    },
    async after() {
      for (const a of admins) a.disconnect();
      await cluster?.stop();
    },
    cannotList: "List scans one node; on Redis Cluster it answers unsupported (docs/operations.md)",
  },
);
