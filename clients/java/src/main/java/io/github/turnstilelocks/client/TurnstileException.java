package io.github.turnstilelocks.client;

import java.time.Duration;
import java.util.List;
import turnstile.v1.Turnstile.Failed;

/**
 * The one exception of the Turnstile client: {@link #reason()} is one of a closed set, the message
 * says it for humans, and the cause carries the underlying gRPC error when there is one. A
 * {@link Reason#TIMEOUT} of an acquire names in {@link #blockedBy()} the holders it waited behind; a
 * {@link Reason#DEADLOCK} names in {@link #deadlockCycle()} the cycle it was chosen from.
 */
public final class TurnstileException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * The closed set of reasons: the protocol's per-request failures one to one, then SESSION_ENDED,
   * LOST and CONNECTION, which come from the client and the stream.
   */
  public enum Reason {
    INVALID_ARGUMENT,
    TIMEOUT,
    CANCELLED,
    NOT_HELD,
    DUPLICATE_REQUEST,
    LIMIT,
    CONFLICT,
    UNAVAILABLE,
    INTERNAL,
    BUSY,
    EXPIRED,
    PERMISSION_DENIED,
    /** The acquire was the youngest wait of a deadlock cycle and was withdrawn (docs/deadlocks.md). */
    DEADLOCK,
    /** A transfer's successor does not wait (the message names who does), or nobody holds the lock asked to let go. */
    NOT_FOUND,
    /** The session ended (closed, or not resumable) before the request was answered. */
    SESSION_ENDED,
    /** A lock was lost (its lease ran out on the client's clock, or the server said so). */
    LOST,
    /** No coordinator could be reached, or one refused the connection (TLS, credentials). */
    CONNECTION;

    /** True for failures where sending the same acquire again makes sense. */
    public boolean retryable() {
      return this == TIMEOUT || this == BUSY || this == UNAVAILABLE || this == EXPIRED || this == LOST;
    }
  }

  /**
   * A holder an acquire waited behind when its wait ran out, and how long it had held the lock;
   * {@code name} is the lock it holds, set for the blockers of an acquireAll set (which name several
   * locks), else "".
   */
  public record Blocker(String sessionId, String owner, String clientName, String identity, Duration heldFor,
      long fencingToken, String name) {}

  /**
   * One waiter of a deadlock cycle: (sessionId, owner) waits for the lock {@code name}, which the next
   * step's (sessionId, owner) holds; the last step's lock is held by the first step's.
   */
  public record DeadlockStep(String sessionId, String owner, String clientName, String requestId, String name) {}

  private final Reason reason;
  private final transient List<Blocker> blockedBy;
  private final transient List<DeadlockStep> deadlockCycle;

  /** An exception with no blockers. */
  public TurnstileException(Reason reason, String message, Throwable cause) {
    this(reason, message, cause, List.of(), List.of());
  }

  private TurnstileException(Reason reason, String message, Throwable cause, List<Blocker> blockedBy,
      List<DeadlockStep> deadlockCycle) {
    super(message, cause);
    this.reason = reason;
    this.blockedBy = List.copyOf(blockedBy);
    this.deadlockCycle = List.copyOf(deadlockCycle);
  }

  /** What went wrong. */
  public Reason reason() {
    return reason;
  }

  /** For TIMEOUT: the holders the acquire waited behind (empty when none were left or unknown). */
  public List<Blocker> blockedBy() {
    return blockedBy;
  }

  /** For DEADLOCK: the cycle, starting with this acquire (empty for every other reason). */
  public List<DeadlockStep> deadlockCycle() {
    return deadlockCycle;
  }

  /** The exception for the server's {@code failed} answer; unknown reasons become INTERNAL. */
  static TurnstileException fromFailed(Failed failed) {
    Reason reason = switch (failed.getReason()) {
      case FAILURE_REASON_INVALID_ARGUMENT -> Reason.INVALID_ARGUMENT;
      case FAILURE_REASON_TIMEOUT -> Reason.TIMEOUT;
      case FAILURE_REASON_CANCELLED -> Reason.CANCELLED;
      case FAILURE_REASON_NOT_HELD -> Reason.NOT_HELD;
      case FAILURE_REASON_DUPLICATE_REQUEST -> Reason.DUPLICATE_REQUEST;
      case FAILURE_REASON_LIMIT -> Reason.LIMIT;
      case FAILURE_REASON_CONFLICT -> Reason.CONFLICT;
      case FAILURE_REASON_UNAVAILABLE -> Reason.UNAVAILABLE;
      case FAILURE_REASON_BUSY -> Reason.BUSY;
      case FAILURE_REASON_EXPIRED -> Reason.EXPIRED;
      case FAILURE_REASON_PERMISSION_DENIED -> Reason.PERMISSION_DENIED;
      case FAILURE_REASON_DEADLOCK -> Reason.DEADLOCK;
      case FAILURE_REASON_NOT_FOUND -> Reason.NOT_FOUND;
      default -> Reason.INTERNAL;
    };
    List<Blocker> blockers = failed.getBlockedByList().stream()
        .map(b -> new Blocker(b.getSessionId(), b.getOwner(), b.getClientName(), b.getIdentity(),
            ProtoDuration.toDuration(b.getHeldFor()), b.getFencingToken(), b.getName()))
        .toList();
    String subject = failed.getName().isEmpty() ? "" : "\"" + failed.getName() + "\": ";
    String text = failed.getMessage().isEmpty() ? reason.name().toLowerCase() : failed.getMessage();
    StringBuilder message = new StringBuilder(subject).append(text);
    if (!blockers.isEmpty()) {
      message.append(" (blocked by ");
      for (int i = 0; i < blockers.size(); i++) {
        Blocker b = blockers.get(i);
        if (i > 0) message.append(", ");
        message.append(b.clientName().isEmpty() ? b.sessionId() : b.clientName())
            .append(b.name().isEmpty() ? " holding it" : " holding \"" + b.name() + "\"").append(" for ")
            .append(b.heldFor().toMillis()).append(" ms");
      }
      message.append(')');
    }
    List<DeadlockStep> cycle = failed.getDeadlockCycleList().stream()
        .map(s -> new DeadlockStep(s.getSessionId(), s.getOwner(), s.getClientName(), s.getRequestId(), s.getName()))
        .toList();
    return new TurnstileException(reason, message.toString(), null, blockers, cycle);
  }
}
