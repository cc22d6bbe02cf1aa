package io.github.turnstilelocks.client;

/** Work done while holding a lock (see {@link TurnstileClient#withLock(String, AcquireOptions, LockBody)}). */
@FunctionalInterface
public interface LockBody<T> {
  /** Runs with {@code lock} held; watch {@link Lock#lost()} or check {@link Lock#isValid()} before each use. */
  T run(Lock lock) throws Exception;
}
