import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { packageVersion } from "../env/package-version.js";
import type { LockImpl } from "./lock-impl.js";

const LEASE_MS = 10_000;
const RETRY_MS = 1;
// Compare-and-delete: only the token that set the key may delete it.
const RELEASE_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

type SpinRedis = Redis & { spinRelease(key: string, token: string): Promise<number> };

/**
 * The classic Redis spin lock: SET key token NX PX, retried every 1 ms until it succeeds, and a
 * Lua compare-and-delete to release. One ioredis connection per contender.
 */
export function spinLockImpl(redisUrl: string): LockImpl {
  return {
    id: "spin",
    label: "Redis spin lock (1 ms)",
    waits: `SET NX PX retried every ${RETRY_MS} ms; Lua compare-and-delete release`,
    version: `ioredis ${packageVersion("ioredis")}`,
    wireCommands: ["set", "evalsha", "eval"],
    async connect() {
      const redis = new Redis(redisUrl, { lazyConnect: true }) as SpinRedis;
      redis.defineCommand("spinRelease", { numberOfKeys: 1, lua: RELEASE_LUA });
      await redis.connect();
      return {
        async acquire(name) {
          const key = `spin:${name}`;
          const token = randomUUID();
          while ((await redis.set(key, token, "PX", LEASE_MS, "NX")) !== "OK") await sleep(RETRY_MS);
          return {
            async release() {
              await redis.spinRelease(key, token);
            },
          };
        },
        async close() {
          redis.disconnect();
        },
      };
    },
  };
}
