import type { AcquireSetArgs, AcquireSetOutcome } from "../store.js";
import { setsAhead } from "./memory-entries.js";
import { type MemoryLock, pairKey } from "./memory-lock.js";

/**
 * acquire-set.lua in process, over the set's locks in name order: purges each, then grants every
 * lock at once (one token each) when on each the claim fits and only set members wait ahead of it,
 * or queues a set-member entry on every lock (a re-run keeps its places). Changes nothing when it
 * refuses (`held`, `conflict`, `busy`).
 */
export function acquireSet(locks: MemoryLock[], a: AcquireSetArgs, now: number): AcquireSetOutcome {
  const holder = pairKey(a.sessionId, a.owner);
  const waiter = pairKey(a.sessionId, a.requestId);
  const tokens: bigint[] = [];
  let busy = -1;
  for (const [i, lock] of locks.entries()) {
    const { mode, limit } = a.locks[i];
    lock.purge(now);
    lock.forgetIfEmpty();
    const held = lock.holders.get(holder);
    if (held && held.requestId !== a.requestId) return { kind: "held", index: i };
    if (mode === "shared" && lock.limit !== undefined && lock.limit !== limit) {
      return { kind: "conflict", index: i, limitInForce: lock.limit };
    }
    if (held) tokens[i] = held.token;
    else if (busy < 0 && !fitsAhead(lock, mode, limit, waiter, now)) busy = i;
  }
  // Every lock held under this request: a re-run after the grant answers it again.
  if (tokens.filter((t) => t !== undefined).length === locks.length) return { kind: "granted", tokens };
  // A re-run that still holds some of the names keeps their tokens and is granted the others.
  if (busy < 0) return { kind: "granted", tokens: locks.map((lock, i) => tokens[i] ?? grant(lock, a, i, now)) };
  if (!a.mayWait) return { kind: "busy", index: busy };
  let recheckInMs = -1;
  for (const [i, lock] of locks.entries()) {
    // Queued on the names it does not hold: it never queues behind itself.
    if (tokens[i] !== undefined) continue;
    const { mode, limit } = a.locks[i];
    const entry = lock.queue.get(waiter);
    if (entry) entry.deadline = now + a.ttlMs;
    else {
      const { sessionId, requestId, owner } = a;
      const [value, deadline, setNames] = [new Uint8Array(a.value ?? []), now + a.ttlMs, a.locks.map((l) => l.name)];
      lock.queue.set(waiter, { sessionId, requestId, owner, mode, limit, deadline, value, queuedAt: now, setNames });
      if (mode === "shared") lock.limit = limit;
    }
    const ms = lock.msToEarliestLease(now);
    if (ms >= 0) recheckInMs = recheckInMs < 0 ? ms : Math.min(recheckInMs, ms);
  }
  const position = [...locks[busy].queue.keys()].indexOf(waiter) + 1;
  return { kind: "queued", index: busy, position, recheckInMs };
}

/** Whether the set's claim on `lock` may be granted now: no lock-delay in force, it fits, only sets ahead. */
function fitsAhead(
  lock: MemoryLock,
  mode: "exclusive" | "shared",
  limit: number,
  waiter: string,
  now: number,
): boolean {
  return !lock.delay.inForce(now) && lock.fits(mode, limit, lock.holders.size) && setsAhead(lock.queue, waiter);
}

/** Grants lock `i` of the set: its entry leaves the queue and (session, owner) holds it with a new token (and delay). */
function grant(lock: MemoryLock, a: AcquireSetArgs, i: number, now: number): bigint {
  const { mode, lockDelayMs } = a.locks[i];
  lock.queue.delete(pairKey(a.sessionId, a.requestId));
  if (mode === "shared") lock.limit = a.locks[i].limit;
  const token = lock.issueToken(now);
  const { sessionId, owner, requestId } = a;
  const value = new Uint8Array(a.value ?? []);
  const deadline = now + a.ttlMs;
  // The hold keeps the set's lock-delay as a single acquire's does: its unclean end delays the lock.
  lock.hold({ sessionId, owner, value, token, count: 1, mode, requestId, deadline, acquiredAt: now, lockDelayMs }, now);
  return token;
}
