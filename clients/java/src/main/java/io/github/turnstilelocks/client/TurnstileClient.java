package io.github.turnstilelocks.client;

import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import turnstile.v1.Turnstile.LockMode;

/**
 * A Turnstile client: one session (a gRPC stream to one of several coordinators) carrying every
 * lock it holds or waits for, kept alive, resumed on another coordinator when its coordinator
 * drains or dies, and reopened when it could not be resumed. Locks tell their holder first when
 * they are (or may be) lost: see {@link Lock#lost()}. Thread-safe; {@link #close()} releases
 * everything and stops every thread the client started.
 */
public final class TurnstileClient implements AutoCloseable {
  private final ClientThreads threads = new ClientThreads();
  private final ClientContext ctx;
  private CompletableFuture<Session> session; // guarded by this
  private boolean closed; // guarded by this

  TurnstileClient(List<String> addresses, ChannelCredentials credentials, String clientName, Duration ttl,
      Duration openTimeout, Consumer<ClientEvent> events) {
    List<ManagedChannel> channels = new ArrayList<>();
    for (String address : addresses) channels.add(threads.channel(address, credentials));
    ctx = new ClientContext(new Coordinators(channels), threads.timers, threads.callbacks, events, clientName, ttl, openTimeout);
  }

  /** A builder for a client of the coordinators at these {@code host:port} addresses. */
  public static TurnstileClientBuilder builder(String... addresses) {
    return new TurnstileClientBuilder(List.of(addresses));
  }

  /** Waits (forever) for the exclusive lock {@code name}. */
  public Lock acquire(String name) throws InterruptedException {
    return acquire(name, AcquireOptions.defaults());
  }

  /**
   * Waits for the exclusive lock {@code name} as {@code options} say. Throws TurnstileException
   * (TIMEOUT naming the blockers when the wait ran out, ...); interrupted, it withdraws the acquire
   * and throws InterruptedException.
   */
  public Lock acquire(String name, AcquireOptions options) throws InterruptedException {
    return Futures.await(acquireAsync(name, options), Lock::releaseAsync);
  }

  /** Asks for the exclusive lock; cancelling the future withdraws the acquire. */
  public CompletableFuture<Lock> acquireAsync(String name, AcquireOptions options) {
    return acquireAsync(name, LockMode.LOCK_MODE_EXCLUSIVE, 0, options);
  }

  /** Tries the exclusive lock once: empty when it is taken (or others wait for it). */
  public Optional<Lock> tryAcquire(String name) throws InterruptedException {
    return tryAcquire(name, AcquireOptions.defaults());
  }

  /** Tries once with these options (their wait is ignored): empty when the lock is taken. */
  public Optional<Lock> tryAcquire(String name, AcquireOptions options) throws InterruptedException {
    return tryOnce(acquireAsync(name, LockMode.LOCK_MODE_EXCLUSIVE, 0, options.withWait(Duration.ZERO)));
  }

  /** Runs {@code body} holding the lock (waiting forever for it) and releases it after. */
  public <T> T withLock(String name, Callable<T> body) throws Exception {
    return withLock(name, AcquireOptions.defaults(), lock -> body.call());
  }

  /** Runs {@code body} with the lock held and releases it after; an exception from the body wins. */
  public <T> T withLock(String name, AcquireOptions options, LockBody<T> body) throws Exception {
    try (Lock lock = acquire(name, options)) {
      return body.run(lock);
    }
  }

  /** A counting semaphore: at most {@code limit} holders of {@code name} at once, across all clients. */
  public Semaphore semaphore(String name, int limit) {
    return new Semaphore(this, name, limit);
  }

  /** A read-write lock on {@code name}: many readers or one writer, one FIFO queue. */
  public ReadWriteLock readWriteLock(String name) {
    return new ReadWriteLock(this, name);
  }

  /** Leader election on {@code name}: campaign, ask for the leader, observe changes. */
  public Election election(String name) {
    return new Election(this, name);
  }

  /** The current session's id, or "" before the first session opened. */
  public synchronized String sessionId() {
    Session s = session == null ? null : session.getNow(null);
    return s == null ? "" : s.id;
  }

  /** Ends the session (the coordinator releases everything; locks report SESSION_ENDED) and stops every thread. */
  @Override
  public void close() {
    CompletableFuture<Session> last;
    synchronized (this) {
      if (closed) return;
      closed = true;
      last = session;
    }
    if (last != null && !last.isDone()) last.cancel(false); // an open still on its way closes itself
    Session s = last == null || last.isCompletedExceptionally() ? null : last.getNow(null);
    if (s != null) s.close();
    threads.close();
  }

  CompletableFuture<Lock> acquireAsync(String name, LockMode mode, int limit, AcquireOptions options) {
    CompletableFuture<Lock> result = new CompletableFuture<>();
    CompletableFuture<Session> opening = session();
    if (options.waitTime() != null && !opening.isDone()) giveUpBeforeOpen(result, opening, name, options.waitTime());
    opening.whenComplete((s, error) -> {
      if (result.isDone()) return; // given up on (or cancelled) before the session opened: nothing sent
      if (error != null) {
        result.completeExceptionally(Futures.turnstileCause(error));
        return;
      }
      CompletableFuture<Lock> inner = s.acquire(name, mode, limit, options);
      result.whenComplete((lock, e) -> {
        if (result.isCancelled()) inner.cancel(true);
      });
      inner.whenComplete((lock, e) -> {
        if (e != null) result.completeExceptionally(e);
        else if (!result.complete(lock)) lock.releaseAsync();
      });
    });
    return result;
  }

  // The client's own deadline before anything is sent: no session by wait + grace fails TIMEOUT.
  private void giveUpBeforeOpen(CompletableFuture<Lock> result, CompletableFuture<Session> opening, String name, Duration wait) {
    long giveUpMs = wait.toMillis() + AcquireDeadlines.ANSWER_GRACE_MS;
    TurnstileException timeout = new TurnstileException(Reason.TIMEOUT, "\"" + name + "\": no session opened within acquire.wait of "
        + wait.toMillis() + " ms + " + AcquireDeadlines.ANSWER_GRACE_MS + " ms; nothing was sent", null);
    Runnable giveUp = () -> result.completeExceptionally(timeout);
    try {
      // Completed on the callback pool: the caller's continuations never run on the timer thread.
      ScheduledFuture<?> timer = ctx.timers().schedule(() -> ctx.runOnCallbacks(giveUp, giveUp), giveUpMs, TimeUnit.MILLISECONDS);
      opening.whenComplete((s, error) -> timer.cancel(false));
    } catch (RejectedExecutionException closing) {
      // The client is closing: the open fails and so does the acquire.
    }
  }

  Optional<Lock> tryOnce(CompletableFuture<Lock> attempt) throws InterruptedException {
    try {
      return Optional.of(Futures.await(attempt, Lock::releaseAsync));
    } catch (TurnstileException e) {
      if (e.reason() == Reason.BUSY) return Optional.empty();
      throw e;
    }
  }

  /** The session, opened on first use and again after one ended for good. */
  synchronized CompletableFuture<Session> session() {
    if (closed) return CompletableFuture.failedFuture(new TurnstileException(Reason.SESSION_ENDED, "the client is closed", null));
    boolean usable = session != null && !session.isCompletedExceptionally()
        && (!session.isDone() || !session.join().isEnded());
    if (!usable) session = SessionOpener.open(ctx);
    return session;
  }

  ClientContext context() {
    return ctx;
  }
}
