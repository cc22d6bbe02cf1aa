import { type HeldWait, heldWaitKey, heldWaitOf, type WaitRegistry } from "../../wait-registry.js";
import { redisCall } from "../connection/redis-call.js";
import type { RedisClient } from "../connection/redis-connection.js";

/**
 * The registry of hold-and-wait acquires in Redis: one sorted set, `<prefix>:deadlock:waits`, whose
 * members are the entries (heldWaitKey) scored by their expiry in wall-clock ms. One key, so it
 * works unchanged on Cluster; plain commands, no script (docs/data-model.md).
 */
export class RedisWaitRegistry implements WaitRegistry {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.key = `${prefix}:deadlock:waits`;
  }

  async put(waits: readonly HeldWait[], expiresAtMs: number): Promise<void> {
    if (waits.length === 0) return;
    const args = waits.flatMap((w) => [expiresAtMs, heldWaitKey(w)]);
    // Entries that expired (their coordinator is gone) are dropped on the way.
    await redisCall(() =>
      this.redis
        .multi()
        .zremrangebyscore(this.key, "-inf", Date.now())
        .zadd(this.key, ...args)
        .pexpire(this.key, Math.max(1, expiresAtMs - Date.now()))
        .exec(),
    );
  }

  async remove(waits: readonly HeldWait[]): Promise<void> {
    if (waits.length === 0) return;
    await redisCall(() => this.redis.zrem(this.key, ...waits.map(heldWaitKey)));
  }

  async list(nowMs: number): Promise<HeldWait[]> {
    const members = await redisCall(() => this.redis.zrangebyscore(this.key, `(${nowMs}`, "+inf"));
    return members.map(heldWaitOf).filter((w): w is HeldWait => w !== undefined);
  }
}
