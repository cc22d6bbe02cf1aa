/**
 * The longest pause between two reconnect attempts of a store connection (to Redis, to a Sentinel, or
 * after ioredis gave a connection up), in ms. Short, because the first attempt after the Sentinels
 * name a new master is when locking resumes (docs/operations.md: within 1 s of the naming).
 */
export const RECONNECT_MAX_DELAY_MS = 200;

/** The pause before reconnect attempt `attempt` (0, 1, …): 50 ms doubling, at most RECONNECT_MAX_DELAY_MS. */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(50 * 2 ** attempt, RECONNECT_MAX_DELAY_MS);
}
