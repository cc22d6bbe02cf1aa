import type { Store } from "../../../server/store/store.js";
import { ask } from "./claims.js";

const POLL_MS = 5;

/** Re-runs `done` every few ms until it resolves true; rejects after `timeoutMs`. */
export async function pollUntil(done: () => Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > giveUpAt) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

let timers = 0;

/**
 * Resolves once `ms` have passed on the store's own clock, counted from now: holds a lock of a
 * fresh name with an `ms` lease and polls check until that lease has ended. Every lease or
 * retention that began before the call and lasts at most `ms` has then ended too.
 */
export async function passTime(store: Store, ms: number): Promise<void> {
  const name = `timer-${++timers}`;
  await store.acquire(ask(name, "t0", { ttlMs: ms }));
  await pollUntil(async () => (await store.check(name, [])).recheckInMs === -1, `${ms} ms to pass`);
}
