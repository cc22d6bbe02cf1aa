package turnstile.example;

import turnstile.v1.Turnstile.FailureReason;

/** A {@code failed} answer to one request; the session stays open. */
public final class FailedException extends Exception {
  private final FailureReason reason;

  FailedException(FailureReason reason, String message) {
    super(reason + ": " + message);
    this.reason = reason;
  }

  public FailureReason reason() {
    return reason;
  }

  /**
   * True when the same acquire may simply be sent again: the wait ran out, a try-once found the
   * lock taken, the store was unreachable, or the queue entry's lease ran out.
   */
  public boolean retryable() {
    return switch (reason) {
      case FAILURE_REASON_TIMEOUT, FAILURE_REASON_BUSY, FAILURE_REASON_UNAVAILABLE, FAILURE_REASON_EXPIRED -> true;
      default -> false;
    };
  }
}
