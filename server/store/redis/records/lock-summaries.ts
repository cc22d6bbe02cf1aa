import type { LockSummary } from "../../store.js";
import type { RedisClient } from "../connection/redis-connection.js";
import { lockKeys, nameOfDataKey } from "./lock-keys.js";

/** The names of the locks whose data keys are among `keys` and that start with `prefix`. */
export function namesOf(keyPrefix: string, keys: readonly string[], prefix: string): string[] {
  const names: string[] = [];
  for (const key of keys) {
    const name = nameOfDataKey(keyPrefix, key);
    if (name?.startsWith(prefix)) names.push(name);
  }
  return names;
}

/**
 * Counts live holders and waiters of each name, on the clock of the Redis that keeps it (`nowMs(name)`,
 * its TIME in ms); drops names with neither and no delay.
 */
export async function lockSummaries(
  redis: RedisClient,
  keyPrefix: string,
  names: readonly string[],
  nowMs: (name: string) => number,
): Promise<LockSummary[]> {
  const rows = await Promise.all(
    names.map(async (name) => {
      const now = nowMs(name);
      const after = `(${now}`;
      const [holders, data, , leases] = lockKeys(keyPrefix, name);
      const [counted, waiting, [excl, limit, delay]] = await Promise.all([
        redis.zcount(holders, after, "+inf"),
        redis.zcount(leases, after, "+inf"),
        redis.hmget(data, "excl", "limit", "delay"),
      ]);
      // A lock-delay in force is a member of the holders set (scripts/includes/delay.lua), not a holder.
      const delayMs = delay === null ? 0 : Number(delay) - now;
      const held = delayMs > 0 ? counted - 1 : counted;
      // Beside a delay only shared holds can be left (an exclusive one is the only holder): 'excl' is the
      // delay's. It stays, with the 'delay' field, after the delay has passed until a script purges the lock.
      const mode = held === 0 ? undefined : excl && delay === null ? "exclusive" : "shared";
      return {
        name,
        mode,
        limit: limit === null ? undefined : Number(limit),
        holders: held,
        waiters: waiting,
        ...(delayMs > 0 && { delayMs }),
      } as const;
    }),
  );
  return rows.filter((r) => r.holders + r.waiters > 0 || r.delayMs);
}
