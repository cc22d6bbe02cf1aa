package io.github.turnstilelocks.client;

import java.time.Duration;
import java.util.Objects;

/**
 * How to acquire: how long to wait (null, the default: forever; {@link Duration#ZERO}: try once),
 * the owner (the reentrancy key; null, the default: the owner of the thread's unit of work — a
 * {@code withLock} body's lock, an {@link OwnerScope} — else a fresh owner per acquire, so separate
 * tasks exclude each other), the value attached to the hold (operators and election observers see it) and the
 * hold's lock-delay (null, the default: the coordinator's default for the name's prefix). Immutable:
 * each {@code with...} returns a copy.
 */
public final class AcquireOptions {
  private static final AcquireOptions DEFAULTS = new AcquireOptions(null, null, new byte[0], null, 0, null);
  /** The longest lock-delay a coordinator accepts (acquire.lock_delay). */
  public static final Duration MAX_LOCK_DELAY = Duration.ofSeconds(60);
  /** The highest priority a coordinator accepts (acquire.priority). */
  public static final int MAX_PRIORITY = 100;

  private final Duration wait;
  private final String owner;
  private final byte[] value;
  private final Duration lockDelay;
  private final int priority;
  private final String askToYield;

  private AcquireOptions(Duration wait, String owner, byte[] value, Duration lockDelay, int priority, String askToYield) {
    this.wait = wait;
    this.owner = owner;
    this.value = value;
    this.lockDelay = lockDelay;
    this.priority = priority;
    this.askToYield = askToYield;
  }

  /** Wait forever, a fresh owner, no value. */
  public static AcquireOptions defaults() {
    return DEFAULTS;
  }

  /** Waits at most {@code wait} (server-side) for the lock; zero tries once. */
  public static AcquireOptions waitAtMost(Duration wait) {
    return DEFAULTS.withWait(wait);
  }

  /** A copy waiting at most {@code wait}; null waits forever, zero tries once. */
  public AcquireOptions withWait(Duration wait) {
    if (wait != null && wait.isNegative()) throw new IllegalArgumentException("wait: must not be negative, got " + wait);
    return new AcquireOptions(wait, owner, value, lockDelay, priority, askToYield);
  }

  /** A copy acquiring as {@code owner}: acquiring again with the same owner re-enters the hold. */
  public AcquireOptions withOwner(String owner) {
    return new AcquireOptions(wait, owner, value, lockDelay, priority, askToYield);
  }

  /** A copy attaching {@code value} to the hold. */
  public AcquireOptions withValue(byte[] value) {
    return new AcquireOptions(wait, owner, Objects.requireNonNull(value, "value").clone(), lockDelay, priority, askToYield);
  }

  /**
   * A copy with the hold's lock-delay: if the hold ends without a release (its lease runs out, the
   * session is lost, an operator revokes it), nobody is granted the lock until {@code lockDelay} has
   * passed; a release hands it on at once. Zero: none; null: the coordinator's default for the name's
   * prefix. Above {@link #MAX_LOCK_DELAY} the coordinator refuses the acquire with INVALID_ARGUMENT
   * naming acquire.lock_delay (acquire_all.lock_delay for a set, where it is every hold's).
   */
  public AcquireOptions withLockDelay(Duration lockDelay) {
    if (lockDelay != null && lockDelay.isNegative())
      throw new IllegalArgumentException("lockDelay: must not be negative, got " + lockDelay);
    return new AcquireOptions(wait, owner, value, lockDelay, priority, askToYield);
  }

  /** Acquires with the hold's lock-delay {@code lockDelay} (see {@link #withLockDelay}), waiting forever. */
  public static AcquireOptions lockDelay(Duration lockDelay) {
    return DEFAULTS.withLockDelay(lockDelay);
  }

  /**
   * A copy queued with {@code priority} (0 to {@link #MAX_PRIORITY}; default 0): ahead of every waiter of
   * lower priority, FIFO within one; a holder is never pre-empted (docs/elections.md). Outside the range
   * the coordinator refuses the acquire with INVALID_ARGUMENT naming acquire.priority.
   */
  public AcquireOptions withPriority(int priority) {
    return new AcquireOptions(wait, owner, value, lockDelay, priority, askToYield);
  }

  /**
   * A copy that, for {@link Election#campaign(byte[], AcquireOptions)} only, asks the leader to yield with
   * {@code reason} once the campaign is queued (a release request; the leader decides). Null: nobody is asked.
   */
  public AcquireOptions withAskToYield(String reason) {
    return new AcquireOptions(wait, owner, value, lockDelay, priority, reason);
  }

  /** The queue priority (0: none). */
  public int priority() {
    return priority;
  }

  /** The reason a campaign asks the leader to yield with, or null. */
  public String askToYield() {
    return askToYield;
  }

  /** The lock-delay, or null for the coordinator's default. */
  public Duration lockDelay() {
    return lockDelay;
  }

  /** The wait, or null for forever. */
  public Duration waitTime() {
    return wait;
  }

  /** The owner, or null for the thread's unit of work's (else a fresh one per acquire). */
  public String owner() {
    return owner;
  }

  byte[] value() {
    return value;
  }
}
