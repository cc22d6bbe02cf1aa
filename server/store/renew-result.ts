/**
 * Answer to a renewal on one lock: each hold's token and count if it was still alive (null: lost), and
 * for each waiter whether it is still queued, was granted meanwhile (its hold was renewed in its place)
 * or is gone.
 */
export interface RenewOutcome {
  holds: ({ token: bigint; count: number } | null)[];
  waiters: ("queued" | "granted" | "gone")[];
}

/**
 * Answer to a renewal (Store.renew): one outcome per lock, in the order asked, and, when the renewal
 * touched the session record too (RenewArgs.touchSession), whether that record was still there.
 */
export interface RenewResult {
  locks: RenewOutcome[];
  /**
   * Only with `touchSession`: true when the record's expiry was pushed to now + ttl, false when it had
   * already expired (as touchSession answers; the record is not created again).
   */
  sessionAlive?: boolean;
  /**
   * Only with `touchSession` where the record's touch is a command of its own (Redis Cluster, or no lock) and that
   * command failed: why. `locks` still holds, so the caller acts on it, then treats the renewal as failed.
   */
  touchError?: { reason: unknown };
}
