import type { Claim, ReleaseOutcome, Store } from "../../store/store.js";
import { outcomeUnknown } from "../../store/store-unavailable-error.js";
import type { OutcomeResolver } from "./outcome-resolver.js";

/**
 * Drops one hold of (session, owner) exactly once, even when the store does not answer. A release
 * is not idempotent (a re-entered hold would lose two counts), so after an unknown outcome each
 * retry first reads the lock (on the same connection, so after the lost attempt ran, if it did):
 * a count below `countBefore`, or no hold at all, means the release took effect. Retried until
 * the store answers, also when nothing was sent: the client asked to let go.
 */
export async function releaseExactlyOnce(
  store: Store,
  resolver: OutcomeResolver,
  hold: Omit<Claim, "requestId"> & { token?: bigint },
  countBefore: number,
  onUnknown: () => void,
): Promise<ReleaseOutcome> {
  let unknown = false;
  const attempt = async (): Promise<ReleaseOutcome> => {
    if (unknown) {
      const state = await store.describe(hold.name);
      const mine = state.holders.find((h) => h.sessionId === hold.sessionId && h.owner === hold.owner);
      // Gone is what the client asked for, whether this release or the lease ended it.
      if (!mine) return { kind: "released", holdCount: 0 };
      if (mine.count < countBefore) return { kind: "released", holdCount: mine.count };
    }
    try {
      return await store.release(hold, false);
    } catch (err) {
      if (outcomeUnknown(err)) unknown = true;
      throw err;
    }
  };
  const outcome = await resolver.resolve(attempt, { retryUnchanged: true, onUnknown });
  // resolve resolves undefined only when told it is no longer wanted, which a release never is.
  if (outcome === undefined) throw new Error("releaseExactlyOnce: resolved without an answer");
  return outcome;
}
