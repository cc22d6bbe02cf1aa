import type { Claim, LockSummary, RenewLock, Store, StoreMode } from "../../../server/store/store.js";

/** A claim as the operations name it: [session, owner, request]. */
export type ClaimRef = [sessionId: string, owner: string, requestId: string];

/**
 * One step of a differential sequence: a call on the Store interface with plain, printable
 * arguments, or `advance`, which moves both stores' clocks (shared-clock.ts). Operations name
 * claims by value, never by an earlier step's answer, so any subsequence is a valid sequence too
 * (what the shrinker relies on).
 */
export type StoreOperation =
  | {
      op: "acquire";
      name: string;
      claim: ClaimRef;
      ttlMs: number;
      mode: StoreMode;
      limit: number;
      mayWait: boolean;
      lockDelayMs?: number;
      priority?: number;
      value: string;
    }
  | {
      op: "acquireSet";
      names: string[];
      claim: ClaimRef;
      ttlMs: number;
      mode: StoreMode;
      limit: number;
      mayWait: boolean;
      lockDelayMs?: number;
    }
  | { op: "release"; name: string; sessionId: string; owner: string; all: boolean }
  | { op: "withdraw"; name: string; claim: ClaimRef; how: "cancel" | "abandon" }
  | { op: "check"; name: string; waiters: ClaimRef[] }
  | {
      op: "renew";
      sessionId: string;
      ttlMs: number;
      locks: { name: string; owners: string[]; waiters: [owner: string, requestId: string][] }[];
      touchSession: boolean;
    }
  | { op: "revoke"; name: string; sessionId: string; owner: string }
  | { op: "proclaim"; name: string; sessionId: string; owner: string; value: string }
  | {
      op: "transfer";
      name: string;
      sessionId: string;
      owner: string;
      token: string;
      toSessionId: string;
      toOwner: string;
    }
  | { op: "requestRelease"; name: string; requester: string; reason: string }
  | { op: "saveSession"; sessionId: string; ttlMs: number }
  | { op: "loadSession"; sessionId: string }
  | { op: "touchSession"; sessionId: string; ttlMs: number }
  | { op: "deleteSession"; sessionId: string }
  | { op: "list"; prefix: string; pageSize: number }
  | { op: "advance"; ms: number };

const bytes = (text: string) => new TextEncoder().encode(text);
const claimOf = (name: string, [sessionId, owner, requestId]: ClaimRef): Claim => ({
  name,
  sessionId,
  owner,
  requestId,
});

/**
 * Runs one operation (other than `advance`, which the runner does on the clock) on `store` and
 * answers what the store answered; a rejection is answered as `{ error: message }`, so that both
 * stores refusing the same call compares equal.
 */
export async function applyOperation(store: Store, o: Exclude<StoreOperation, { op: "advance" }>): Promise<unknown> {
  try {
    return await call(store, o);
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function call(store: Store, o: Exclude<StoreOperation, { op: "advance" }>): Promise<unknown> {
  switch (o.op) {
    case "acquire": {
      const { name, claim, ttlMs, mode, limit, mayWait, lockDelayMs, priority, value } = o;
      const args = { ...claimOf(name, claim), ttlMs, mode, limit, mayWait, lockDelayMs, value: bytes(value) };
      return store.acquire(priority ? { ...args, priority } : args);
    }
    case "acquireSet": {
      const [sessionId, owner, requestId] = o.claim;
      const locks = o.names.map((name) => ({ name, mode: o.mode, limit: o.limit, lockDelayMs: o.lockDelayMs }));
      return store.acquireSet({ sessionId, owner, requestId, ttlMs: o.ttlMs, mayWait: o.mayWait, locks });
    }
    case "release":
      return store.release({ name: o.name, sessionId: o.sessionId, owner: o.owner }, o.all);
    case "withdraw":
      return store.withdraw(claimOf(o.name, o.claim), o.how);
    case "check":
      return store.check(
        o.name,
        o.waiters.map((w) => claimOf(o.name, w)),
      );
    case "renew": {
      const locks: RenewLock[] = o.locks.map(({ name, owners, waiters }) => ({
        name,
        owners,
        waiters: waiters.map(([owner, requestId]) => ({ name, sessionId: o.sessionId, owner, requestId })),
      }));
      return store.renew({ sessionId: o.sessionId, ttlMs: o.ttlMs, locks, touchSession: o.touchSession });
    }
    case "revoke":
      return store.revoke({ name: o.name, sessionId: o.sessionId, owner: o.owner });
    case "proclaim":
      return store.proclaim({ name: o.name, sessionId: o.sessionId, owner: o.owner }, bytes(o.value));
    case "transfer": {
      const { name, sessionId, owner, toSessionId, toOwner } = o;
      return store.transfer({ name, sessionId, owner, token: BigInt(o.token), toSessionId, toOwner });
    }
    case "requestRelease":
      return store.requestRelease({ name: o.name, requester: o.requester, reason: o.reason });
    case "saveSession":
      return store.saveSession({
        sessionId: o.sessionId,
        secretHash: `hash-of-${o.sessionId}`,
        ttlMs: o.ttlMs,
        clientName: `client-${o.sessionId}`,
      });
    case "loadSession":
      return store.loadSession(o.sessionId);
    case "touchSession":
      return store.touchSession(o.sessionId, o.ttlMs);
    case "deleteSession":
      return store.deleteSession(o.sessionId);
    case "list":
      return listAll(store, o.prefix, o.pageSize);
  }
}

/**
 * Every page of a List, its locks sorted by name: page tokens are each store's own, and how a listing
 * falls into pages is not promised (a page may hold fewer before the end), only which locks it lists.
 */
async function listAll(store: Store, prefix: string, pageSize: number): Promise<unknown> {
  const locks: LockSummary[] = [];
  let token = "";
  for (let page = 0; page < 50; page++) {
    const answer = await store.list(prefix, pageSize, token);
    if (typeof answer === "string") return answer;
    locks.push(...answer.locks);
    token = answer.nextPageToken;
    if (token === "") return locks.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  return { error: "the listing did not end within 50 pages" };
}

/** One line of a printed sequence: the operation as JSON, which `JSON.parse` turns back into it. */
export function formatOperation(o: StoreOperation): string {
  return JSON.stringify(o);
}
