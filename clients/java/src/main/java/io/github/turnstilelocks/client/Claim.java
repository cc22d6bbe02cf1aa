package io.github.turnstilelocks.client;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One lock of a set taken with {@link TurnstileClient#acquireAll(List, AcquireOptions)}: a name held
 * EXCLUSIVE, or SHARED by at most {@code limit} holders at once (0: no limit), checked against the
 * SHARED limit in force like a single acquire's.
 */
public record Claim(String name, Mode mode, int limit) {
  /** How a claim holds its name. */
  public enum Mode {
    EXCLUSIVE,
    SHARED
  }

  /** A claim; {@code name} and {@code mode} must not be null, {@code limit} not negative. */
  public Claim {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(mode, "mode");
    if (limit < 0) throw new IllegalArgumentException("limit: must not be negative, got " + limit);
  }

  /** The exclusive lock {@code name}. */
  public static Claim exclusive(String name) {
    return new Claim(name, Mode.EXCLUSIVE, 0);
  }

  /** A SHARED hold of {@code name} among at most {@code limit} holders (0: no limit). */
  public static Claim shared(String name, int limit) {
    return new Claim(name, Mode.SHARED, limit);
  }

  /** Exclusive claims of {@code names}, in order. */
  public static List<Claim> names(String... names) {
    return Arrays.stream(names).map(Claim::exclusive).toList();
  }

  turnstile.v1.Turnstile.LockClaim toProto() {
    turnstile.v1.Turnstile.LockMode wire = mode == Mode.SHARED
        ? turnstile.v1.Turnstile.LockMode.LOCK_MODE_SHARED : turnstile.v1.Turnstile.LockMode.LOCK_MODE_EXCLUSIVE;
    return turnstile.v1.Turnstile.LockClaim.newBuilder().setName(name).setMode(wire).setLimit(limit).build();
  }
}
