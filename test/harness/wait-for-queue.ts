import { Redis } from "ioredis";
import { lockKeys } from "../../server/store/redis/lock-keys.js";

/**
 * Resolves once `count` waiters are queued for `name` in Redis (checked every 5 ms); rejects after
 * `timeoutMs`. For tests that must act only once a request has reached the queue.
 */
export async function waitForQueue(redisUrl: string, name: string, count: number, timeoutMs = 5000): Promise<void> {
  const redis = new Redis(redisUrl);
  const queue = lockKeys("turnstile", name)[2];
  const until = Date.now() + timeoutMs;
  try {
    while ((await redis.zcard(queue)) < count) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${count} waiters on "${name}"`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    redis.disconnect();
  }
}
