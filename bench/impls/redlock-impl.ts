import { Redlock } from "@sesamecare-oss/redlock";
import { Redis } from "ioredis";
import { packageVersion } from "../env/package-version.js";
import type { LockImpl } from "./lock-impl.js";

const DURATION_MS = 10_000;

/**
 * Redlock (the maintained @sesamecare-oss fork) on one Redis with its defaults: a Lua acquire
 * retried every 200 ± 100 ms, at most 10 retries (the contender then tries again). One ioredis
 * connection per contender.
 */
export function redlockImpl(redisUrl: string): LockImpl {
  return {
    id: "redlock",
    label: "Redlock",
    waits: "Lua acquire retried every 200 ± 100 ms, 10 retries (library defaults)",
    version: `@sesamecare-oss/redlock ${packageVersion("@sesamecare-oss/redlock")}`,
    wireCommands: ["evalsha", "eval"],
    async connect() {
      const redis = new Redis(redisUrl, { lazyConnect: true });
      await redis.connect();
      const redlock = new Redlock([redis]);
      return {
        async acquire(name) {
          const lock = await redlock.acquire([`redlock:${name}`], DURATION_MS);
          return {
            async release() {
              await lock.release();
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
