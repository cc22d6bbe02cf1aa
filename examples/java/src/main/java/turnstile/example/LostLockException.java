package turnstile.example;

/** A lock was lost before or while it was used; {@link #reason()} says why. */
public final class LostLockException extends Exception {
  /** The client could not confirm the lease in time (its own judgement, not the server's). */
  public static final String LEASE_UNCONFIRMED = "lease-unconfirmed";
  public static final String EXPIRED = "expired";
  public static final String REVOKED = "revoked";
  public static final String SESSION_ENDED = "session-ended";

  private final String reason;

  LostLockException(LockHandle lock, String reason) {
    super("lock \"" + lock.name() + "\" (token " + Long.toUnsignedString(lock.fencingToken()) + ") lost: " + reason);
    this.reason = reason;
  }

  public String reason() {
    return reason;
  }
}
