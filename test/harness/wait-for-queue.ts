import { Redis } from "ioredis";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { until } from "./until.js";

/**
 * Resolves once `count` waiters are queued for `name` in Redis (checked every 5 ms); rejects after
 * `timeoutMs`. For tests that must act only once a request has reached the queue.
 */
export async function waitForQueue(redisUrl: string, name: string, count: number, timeoutMs = 5000): Promise<void> {
  const redis = new Redis(redisUrl);
  const queue = lockKeys("turnstile", name)[2];
  try {
    await until(async () => (await redis.zcard(queue)) >= count, `${count} waiters on "${name}"`, timeoutMs, 5);
  } finally {
    redis.disconnect();
  }
}
