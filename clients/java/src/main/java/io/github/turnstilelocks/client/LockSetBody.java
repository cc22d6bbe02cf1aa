package io.github.turnstilelocks.client;

import java.util.List;

/** Work done while holding a set of locks (see {@link TurnstileClient#withLocks(List, AcquireOptions, LockSetBody)}). */
@FunctionalInterface
public interface LockSetBody<T> {
  /** Runs with every lock of {@code set} held; watch {@link LockSet#lost()} or check each lock before use. */
  T run(LockSet set) throws Exception;
}
