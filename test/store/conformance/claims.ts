import type { AcquireArgs, Claim, RenewOutcome, Store } from "../../../server/store/store.js";

/** A lease that never ends during a test. */
export const LONG_TTL = 30_000;
/** A lease that a test waits out. */
export const SHORT_TTL = 100;

/**
 * An acquire of `name` by session `sessionId` as owner "o" with request "r": exclusive, may wait,
 * leased for LONG_TTL; `more` overrides any of it. Session ids never contain ":".
 */
export function ask(name: string, sessionId: string, more: Partial<AcquireArgs> = {}): AcquireArgs {
  return {
    name,
    sessionId,
    owner: "o",
    requestId: "r",
    ttlMs: LONG_TTL,
    mode: "exclusive",
    limit: 0,
    mayWait: true,
    ...more,
  };
}

/** A shared acquire with `limit` (0: unlimited); `more` overrides as for `ask`. */
export function askShared(
  name: string,
  sessionId: string,
  limit: number,
  more: Partial<AcquireArgs> = {},
): AcquireArgs {
  return ask(name, sessionId, { mode: "shared", limit, ...more });
}

/** The (session, owner) whose hold a release drops. */
export function holdOf(name: string, sessionId: string, owner = "o"): Omit<Claim, "requestId"> {
  return { name, sessionId, owner };
}

/** A waiter as withdraw and check name it: its session, owner and request. */
export function waiterOf(name: string, sessionId: string, requestId = "r", owner = "o"): Claim {
  return { name, sessionId, owner, requestId };
}

/** Renews one lock alone (a keepalive of a session on that lock only) and answers its outcome. */
export async function renewOne(
  store: Store,
  name: string,
  sessionId: string,
  ttlMs: number,
  owners: string[],
  waiters: Claim[],
): Promise<RenewOutcome> {
  return (await store.renew({ sessionId, ttlMs, locks: [{ name, owners, waiters }] })).locks[0];
}
