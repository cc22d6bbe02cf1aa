/**
 * One queued acquire whose (session, owner) holds at least one other lock: hold-and-wait, the only
 * kind of wait that can close a deadlock cycle (docs/deadlocks.md). Its coordinator registers it
 * while it waits; every coordinator's deadlock detector reads them all.
 */
export interface HeldWait {
  sessionId: string;
  owner: string;
  requestId: string;
  /** The lock it waits for. */
  name: string;
  /** As StoreMode (not imported: store.ts imports this file). */
  mode: "exclusive" | "shared";
  /** The waiting session's client name ("" when it gave none). */
  clientName: string;
  /** The coordinator serving the session (the only one that may fail it). */
  coordinatorId: string;
  /** Wall-clock ms (fractional: to the µs) when the acquire arrived: the victim of a cycle is its youngest wait. */
  queuedAtMs: number;
}

/**
 * The registry of hold-and-wait acquires, shared by every coordinator of one store. Entries expire
 * unless their coordinator puts them again, so a crashed coordinator's entries go away by themselves.
 * Nobody writes to it while nobody holds and waits.
 */
export interface WaitRegistry {
  /** Adds the entries, or pushes their expiry, to `expiresAtMs` (wall clock). */
  put(waits: readonly HeldWait[], expiresAtMs: number): Promise<void>;
  /** Removes the entries (as put: the same objects' fields identify them). */
  remove(waits: readonly HeldWait[]): Promise<void>;
  /** Every entry of every coordinator that has not expired at `nowMs` (wall clock). */
  list(nowMs: number): Promise<HeldWait[]>;
}

/**
 * The one string that identifies an entry in a registry: its fields in a fixed order, so a refresh
 * or a removal finds the entry a put wrote, whoever built the object.
 */
export function heldWaitKey(w: HeldWait): string {
  return JSON.stringify([
    w.sessionId,
    w.owner,
    w.requestId,
    w.name,
    w.mode,
    w.clientName,
    w.coordinatorId,
    w.queuedAtMs,
  ]);
}

/** The entry `heldWaitKey` made, or undefined when the string is not one. */
export function heldWaitOf(key: string): HeldWait | undefined {
  try {
    const [sessionId, owner, requestId, name, mode, clientName, coordinatorId, queuedAtMs] = JSON.parse(key);
    if (typeof sessionId !== "string" || typeof requestId !== "string" || typeof queuedAtMs !== "number") return;
    return { sessionId, owner, requestId, name, mode, clientName, coordinatorId, queuedAtMs };
  } catch {
    return undefined;
  }
}
