import { setTimeout as sleep } from "node:timers/promises";
import type { LockClient, LockImpl } from "../impls/lock-impl.js";

const CONNECT_BATCH = 32;
const DRAIN_TIMEOUT_MS = 30_000;

/** Opens `n` clients of an implementation, a batch at a time. */
export async function connectAll(impl: LockImpl, n: number, progress: (d: string) => void): Promise<LockClient[]> {
  const clients: LockClient[] = [];
  while (clients.length < n) {
    progress(`connecting ${clients.length}/${n} clients`);
    const batch = Math.min(CONNECT_BATCH, n - clients.length);
    clients.push(...(await Promise.all(Array.from({ length: batch }, () => impl.connect()))));
  }
  return clients;
}

/**
 * Waits for the contender loops to finish after the run was told to stop; after 30 s it closes the
 * clients so that acquires still waiting fail and the loops can end.
 */
export async function drain(loops: Promise<void>[], clients: LockClient[], progress: (d: string) => void) {
  progress("draining");
  const all = Promise.all(loops);
  const timedOut = await Promise.race([all.then(() => false), sleep(DRAIN_TIMEOUT_MS).then(() => true)]);
  if (timedOut) {
    progress("drain timed out: closing clients");
    await closeAll(clients);
    await all;
  }
}

/** Closes every client, ignoring failures (the run is over). */
export async function closeAll(clients: LockClient[]): Promise<void> {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
}
