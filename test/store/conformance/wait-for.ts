import type { Store } from "../../../server/store/store.js";
import { until } from "../../harness/until.js";
import { ask } from "./claims.js";

let timers = 0;

/**
 * Resolves once `ms` have passed on the store's own clock, counted from now: holds a lock of a
 * fresh name with an `ms` lease and polls check until that lease has ended. Every lease or
 * retention that began before the call and lasts at most `ms` has then ended too.
 */
export async function passTime(store: Store, ms: number): Promise<void> {
  const name = `timer-${++timers}`;
  await store.acquire(ask(name, "t0", { ttlMs: ms }));
  await until(async () => (await store.check(name, [])).recheckInMs === -1, `${ms} ms to pass`, 10_000, 5);
}
