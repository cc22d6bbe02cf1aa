import type { Redis } from "ioredis";

/**
 * Resolves once Redis's own clock (`TIME`) has passed the lease deadline that `member` has in the
 * zset `key` (a holders or waiter-leases zset), so the scripts will treat it as expired. Polls
 * every few ms; rejects if the member has no deadline or the clock has not passed it in time.
 */
export async function waitForLeaseEnd(redis: Redis, key: string, member: string, timeoutMs = 5000): Promise<void> {
  const score = await redis.zscore(key, member);
  if (score === null) throw new Error(`${member} has no lease deadline in ${key}`);
  const deadline = Number(score);
  const giveUpAt = Date.now() + timeoutMs;
  while (Date.now() < giveUpAt) {
    const [seconds, micros] = await redis.time();
    if (Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`redis clock did not pass ${member}'s deadline ${deadline} within ${timeoutMs} ms`);
}
