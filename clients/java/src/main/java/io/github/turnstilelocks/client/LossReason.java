package io.github.turnstilelocks.client;

/** Why a held lock was lost: the argument {@link Lock#lost()} completes with. */
public enum LossReason {
  /**
   * The client could not confirm its lease in time (its own monotonic clock ran past the last
   * acknowledged keepalive + ttl − margin): told first, before the store can hand the lock on.
   */
  LEASE_UNCONFIRMED,
  /** The coordinator reported that the lease ran out in the store. */
  EXPIRED,
  /** An operator revoked the hold (Revoke). */
  REVOKED,
  /** The session ended (it could not be resumed, or the client was closed). */
  SESSION_ENDED
}
