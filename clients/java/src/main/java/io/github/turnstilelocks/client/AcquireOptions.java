package io.github.turnstilelocks.client;

import java.time.Duration;
import java.util.Objects;

/**
 * How to acquire: how long to wait (null, the default: forever; {@link Duration#ZERO}: try once),
 * the owner (the reentrancy key; null, the default: a fresh owner per acquire, so nothing re-enters
 * by accident) and the value attached to the hold (operators and election observers see it).
 * Immutable: each {@code with...} returns a copy.
 */
public final class AcquireOptions {
  private static final AcquireOptions DEFAULTS = new AcquireOptions(null, null, new byte[0]);

  private final Duration wait;
  private final String owner;
  private final byte[] value;

  private AcquireOptions(Duration wait, String owner, byte[] value) {
    this.wait = wait;
    this.owner = owner;
    this.value = value;
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
    return new AcquireOptions(wait, owner, value);
  }

  /** A copy acquiring as {@code owner}: acquiring again with the same owner re-enters the hold. */
  public AcquireOptions withOwner(String owner) {
    return new AcquireOptions(wait, owner, value);
  }

  /** A copy attaching {@code value} to the hold. */
  public AcquireOptions withValue(byte[] value) {
    return new AcquireOptions(wait, owner, Objects.requireNonNull(value, "value").clone());
  }

  /** The wait, or null for forever. */
  public Duration waitTime() {
    return wait;
  }

  /** The owner, or null for a fresh one per acquire. */
  public String owner() {
    return owner;
  }

  byte[] value() {
    return value;
  }
}
