import type { Redis } from "ioredis";
import { until } from "./until.js";

/**
 * Resolves once Redis's own clock (`TIME`) has passed the lease deadline that `member` has in the
 * zset `key` (a holders or waiter-leases zset), so the scripts will treat it as expired. Polls
 * every few ms; rejects if the member has no deadline or the clock has not passed it in time.
 */
export async function waitForLeaseEnd(redis: Redis, key: string, member: string, timeoutMs = 5000): Promise<void> {
  const score = await redis.zscore(key, member);
  if (score === null) throw new Error(`${member} has no lease deadline in ${key}`);
  const deadline = Number(score);
  const redisNowMs = async () => {
    const [seconds, micros] = await redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  await until(
    async () => (await redisNowMs()) > deadline,
    `redis clock to pass ${member}'s deadline ${deadline}`,
    timeoutMs,
    5,
  );
}
