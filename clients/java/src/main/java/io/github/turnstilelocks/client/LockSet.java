package io.github.turnstilelocks.client;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * A set of locks granted together by {@link TurnstileClient#acquireAll(List, AcquireOptions)}
 * (docs/multi-lock.md): one ordinary {@link Lock} per name, in the order they were asked for, each
 * with its own fencing token and lease, releasable alone. {@link #release()} (or try-with-resources)
 * lets go of every lock of the set still held.
 */
public final class LockSet implements AutoCloseable {
  private final List<Lock> locks;
  private final Map<String, Long> tokens;

  LockSet(List<Lock> locks) {
    this.locks = List.copyOf(locks);
    Map<String, Long> byName = new LinkedHashMap<>();
    for (Lock lock : locks) byName.put(lock.name(), lock.fencingToken());
    this.tokens = java.util.Collections.unmodifiableMap(byName);
  }

  /** The locks, in request order. */
  public List<Lock> locks() {
    return locks;
  }

  /** Each name's fencing token, in request order: pass each resource the token of its own name. */
  public Map<String, Long> tokens() {
    return tokens;
  }

  /** The lock of {@code name}; throws IllegalArgumentException when the set has none of that name. */
  public Lock lock(String name) {
    for (Lock lock : locks) {
      if (lock.name().equals(name)) return lock;
    }
    throw new IllegalArgumentException("the set holds no lock named \"" + name + "\"");
  }

  /** True while every lock of the set is held and its lease confirmed on the local clock. */
  public boolean isValid() {
    return locks.stream().allMatch(Lock::isValid);
  }

  /**
   * Completes with the first loss's reason as soon as any lock of the set is lost (never after a
   * release): work that needs the whole set should watch this one future.
   */
  public CompletableFuture<LossReason> lost() {
    CompletableFuture<?>[] each = locks.stream().map(Lock::lost).toArray(CompletableFuture[]::new);
    return CompletableFuture.anyOf(each).thenApply(reason -> (LossReason) reason);
  }

  /** Sends the release of every lock still held at once; completes when all were answered, or with the first refusal. */
  public CompletableFuture<Void> releaseAsync() {
    CompletableFuture<?>[] each = locks.stream().map(Lock::releaseAsync).toArray(CompletableFuture[]::new);
    return CompletableFuture.allOf(each);
  }

  /**
   * Releases every lock of the set (released or lost ones are skipped) and waits for the answers.
   * Interrupted, it returns at once with the interrupt flag set (the releases are on their way).
   * Throws TurnstileException when the coordinator refuses one, after every release was sent.
   */
  public void release() {
    try {
      releaseAsync().get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      throw Futures.turnstileCause(e);
    }
  }

  /** Releases at the end of a try-with-resources block (see {@link #release()}). */
  @Override
  public void close() {
    release();
  }

  @Override
  public String toString() {
    return "LockSet" + tokens;
  }
}
