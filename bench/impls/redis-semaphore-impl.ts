import { Redis } from "ioredis";
import { Mutex } from "redis-semaphore";
import { packageVersion } from "../env/package-version.js";
import type { LockImpl } from "./lock-impl.js";

/**
 * redis-semaphore's Mutex with its defaults (SET NX PX retried every 10 ms, 10 s lock timeout
 * refreshed every 8 s, Lua compare-and-delete release). One ioredis connection per contender.
 */
export function redisSemaphoreImpl(redisUrl: string): LockImpl {
  return {
    id: "redis-semaphore",
    label: "redis-semaphore Mutex",
    waits: "SET NX PX retried every 10 ms (library default)",
    version: `redis-semaphore ${packageVersion("redis-semaphore")}`,
    wireCommands: ["set", "evalsha", "eval"],
    async connect() {
      const redis = new Redis(redisUrl, { lazyConnect: true });
      await redis.connect();
      return {
        async acquire(name) {
          const mutex = new Mutex(redis, `sem:${name}`);
          await mutex.acquire();
          return { release: () => mutex.release() };
        },
        async close() {
          redis.disconnect();
        },
      };
    },
  };
}
