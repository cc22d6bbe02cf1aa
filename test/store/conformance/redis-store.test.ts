import { Redis } from "ioredis";
import { RedisStore } from "../../../server/store/redis/redis-store.js";
import { startRedis, type TestRedis } from "../../harness/redis-server.js";
import { storeConformance } from "./store-conformance.js";

let server: TestRedis | undefined;
let admin: Redis | undefined;

storeConformance("redis", (options) => new RedisStore({ url: server!.url, ...options }), {
  async before() {
    server = await startRedis();
    admin = new Redis(server.url);
  },
  async beforeEach() {
    await admin!.flushall();
  },
  async after() {
    admin?.disconnect();
    await server?.stop();
  },
});
