package io.github.turnstilelocks.client;

/**
 * One unit of work on the current thread (docs/deadlocks.md, "Owners that follow the work"): while it
 * is open, acquires made on this thread through its client without an owner of their own take
 * {@link #owner()}, so the unit's locks are one (session, owner) — re-entry and deadlock detection
 * see them together. {@link TurnstileClient#withLock} and {@link TurnstileClient#withLocks} open one
 * with the held lock's owner around their body; {@link TurnstileClient#ownerScope(String)} opens one
 * explicitly. Close it on the thread that opened it (try-with-resources): the scope it replaced, if
 * any, is in force again.
 */
public final class OwnerScope implements AutoCloseable {
  private final ThreadLocal<String> current;
  private final String owner;
  private final String previous;
  private final Thread thread = Thread.currentThread();
  private boolean closed;

  OwnerScope(ThreadLocal<String> current, String owner) {
    this.current = current;
    this.owner = owner;
    this.previous = current.get();
    current.set(owner);
  }

  /** The owner acquires in this scope take. */
  public String owner() {
    return owner;
  }

  /** Ends the scope; the one it replaced is in force again. Throws IllegalStateException on another thread. */
  @Override
  public void close() {
    if (closed) return;
    if (Thread.currentThread() != thread) throw new IllegalStateException("an owner scope is closed on the thread that opened it");
    closed = true;
    if (previous == null) current.remove();
    else current.set(previous);
  }
}
