import type { HolderState, StoreMode, WaiterState } from "../store.js";

/** One (session, owner) holding the lock; `requestId` is the acquire that was granted. */
export interface Holder {
  sessionId: string;
  owner: string;
  value: Uint8Array;
  token: bigint;
  count: number;
  mode: StoreMode;
  requestId: string;
  /** The request id of its latest re-entry, answered again without counting (acquire.lua's `r:` field). */
  reentryRequestId?: string;
  deadline: number;
  /** When it was granted (re-entries keep it). */
  acquiredAt: number;
  /** Its lock-delay (LockDelay); undefined or 0: none. */
  lockDelayMs?: number;
  /** The latest release request made to it (request-release.lua's `p:` field). */
  releaseRequest?: { requester: string; reason: string };
}

/** One queued acquire; `limit` is the shared limit it asked for. */
export interface Waiter {
  sessionId: string;
  requestId: string;
  owner: string;
  mode: StoreMode;
  limit: number;
  deadline: number;
  value: Uint8Array;
  /** When it first queued (a re-sent request keeps it). */
  queuedAt: number;
  /** For an acquire-set member: every name of its set; it is never granted alone (memory-set.ts). */
  setNames?: string[];
  /** The lock-delay of the hold it becomes. */
  lockDelayMs?: number;
  /** Its queue rank (queue-rank.lua); undefined or 0: none. */
  priority?: number;
}

/**
 * Queues `waiter` under `id` (a Map keeps insertion order): last, or with a priority ahead of every waiter of
 * lower priority and behind those of its own (queue-rank.lua's twin). Priority 0 appends, as before.
 */
export function enqueue(queue: Map<string, Waiter>, id: string, waiter: Waiter): void {
  const priority = waiter.priority ?? 0;
  if (priority === 0) return void queue.set(id, waiter);
  const entries = [...queue];
  const at = entries.findIndex(([, w]) => (w.priority ?? 0) < priority);
  if (at < 0) return void queue.set(id, waiter);
  queue.clear();
  for (const [key, w] of [...entries.slice(0, at), [id, waiter] as const, ...entries.slice(at)]) queue.set(key, w);
}

/**
 * True when only acquire-set members wait ahead of waiter `id` in `queue` (ahead of everyone when `id` is
 * not given): sets-ahead.lua's twin, the queue rule of acquire-sets (docs/multi-lock.md).
 */
export function setsAhead(queue: ReadonlyMap<string, Waiter>, id?: string): boolean {
  for (const [key, w] of queue) {
    if (key === id) return true;
    if (!w.setNames) return false;
  }
  return true;
}

/** A holder as Describe and Watch show it at `now`. */
export function stateOf(h: Holder, now: number): HolderState {
  const { sessionId, owner, token, count, mode, value } = h;
  return { sessionId, owner, token, count, mode, value, leaseMs: Math.max(0, Math.floor(h.deadline - now)) };
}

/** A waiter at queue `position` as Describe shows it at `now`. */
export function waiterStateOf(w: Waiter, position: number, now: number): WaiterState {
  const { sessionId, owner, requestId, mode, setNames } = w;
  const leaseMs = Math.floor(w.deadline - now);
  const waitedMs = Math.max(0, Math.floor(now - w.queuedAt));
  const priority = w.priority ?? 0;
  return { sessionId, owner, requestId, position, mode, leaseMs, waitedMs, priority, ...(setNames && { setNames }) };
}
