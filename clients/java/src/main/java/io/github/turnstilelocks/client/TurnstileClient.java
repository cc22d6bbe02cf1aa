package io.github.turnstilelocks.client;

import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
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
  private final List<String> addresses;
  /** The owner of this thread's unit of work with this client, while an OwnerScope is open. */
  private final ThreadLocal<String> scopeOwner = new ThreadLocal<>();
  private final boolean ownersFollowScope;

  TurnstileClient(List<String> addresses, ChannelCredentials credentials, String clientName, Duration ttl,
      Duration openTimeout, int maxRequestBytes, Consumer<ClientEvent> events, boolean ownersFollowScope) {
    this.addresses = addresses;
    this.ownersFollowScope = ownersFollowScope;
    List<ManagedChannel> channels = new ArrayList<>();
    for (String address : addresses) channels.add(threads.channel(address, credentials));
    ctx = new ClientContext(new Coordinators(channels), threads.timers, threads.callbacks, events, clientName, ttl, openTimeout,
        maxRequestBytes);
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

  /**
   * Runs {@code body} with the lock held and releases it after; an exception from the body wins. The
   * body runs in an {@link OwnerScope} of the lock's owner: acquires it makes on this thread without
   * an owner take that one (re-entry, deadlock detection).
   */
  public <T> T withLock(String name, AcquireOptions options, LockBody<T> body) throws Exception {
    try (Lock lock = acquire(name, options); OwnerScope scope = scopeOf(lock.owner())) {
      return body.run(lock);
    }
  }

  /**
   * Opens a unit of work on this thread (see {@link OwnerScope}): until it is closed, acquires made on
   * this thread without an owner take {@code owner} (null: a fresh one). A scope that takes nothing
   * over when the client was built with {@code ownersFollowScope(false)}.
   */
  public OwnerScope ownerScope(String owner) {
    return scopeOf(owner != null ? owner : "scope-" + UUID.randomUUID());
  }

  /** Opens this thread's unit of work of {@code owner} (withLock, withLocks, withPermit, ownerScope). */
  OwnerScope scopeOf(String owner) {
    return new OwnerScope(scopeOwner, owner);
  }

  /** The options an acquire made now on this thread goes with: its own owner, else the thread's scope's. */
  AcquireOptions inScope(AcquireOptions options) {
    if (!ownersFollowScope || options.owner() != null) return options;
    String owner = scopeOwner.get();
    return owner == null ? options : options.withOwner(owner);
  }

  /**
   * Waits for every lock of {@code claims} at once, all or nothing (docs/multi-lock.md): granted
   * together with one fencing token per name, holding none of them while it waits. 1 to 16 distinct
   * names the owner neither holds nor waits for; else TurnstileException INVALID_ARGUMENT or CONFLICT
   * naming the field ({@code acquire_all.locks[1].name}). A TIMEOUT names in {@link
   * TurnstileException#blockedBy()} the holders of every name ({@link TurnstileException.Blocker#name()});
   * interrupted, it withdraws the set from every name and throws InterruptedException. The options'
   * lock-delay ({@link AcquireOptions#withLockDelay}) is every hold's of the set (over 60 s:
   * INVALID_ARGUMENT naming acquire_all.lock_delay).
   */
  public LockSet acquireAll(List<Claim> claims, AcquireOptions options) throws InterruptedException {
    return Futures.await(acquireAllAsync(claims, options), LockSet::releaseAsync);
  }

  /** Waits (forever) for the exclusive locks {@code names}, all at once (see {@link #acquireAll(List, AcquireOptions)}). */
  public LockSet acquireAll(String... names) throws InterruptedException {
    return acquireAll(Claim.names(names), AcquireOptions.defaults());
  }

  /** Asks for the set; cancelling the future withdraws it from every name. */
  public CompletableFuture<LockSet> acquireAllAsync(List<Claim> claims, AcquireOptions options) {
    List<Claim> copy = List.copyOf(claims);
    AcquireOptions scoped = inScope(options);
    return onSession("acquire_all", scoped, s -> s.sets.acquireAll(copy, scoped), LockSet::releaseAsync);
  }

  /** Tries the set once (the options' wait is ignored): empty when a name of it is taken. */
  public Optional<LockSet> tryAcquireAll(List<Claim> claims, AcquireOptions options) throws InterruptedException {
    try {
      return Optional.of(Futures.await(acquireAllAsync(claims, options.withWait(Duration.ZERO)), LockSet::releaseAsync));
    } catch (TurnstileException e) {
      if (e.reason() == Reason.BUSY) return Optional.empty();
      throw e;
    }
  }

  /** Runs {@code body} with every lock of {@code claims} held and releases the set after; an exception from the body wins. */
  public <T> T withLocks(List<Claim> claims, AcquireOptions options, LockSetBody<T> body) throws Exception {
    try (LockSet set = acquireAll(claims, options); OwnerScope scope = scopeOf(set.locks().get(0).owner())) {
      return body.run(set);
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

  /**
   * Asks every holder of {@code name} to let go, with {@code reason} (at most 256 bytes): each holder's
   * client is told ({@link Lock#onReleaseRequested}); nothing is enforced. Returns how many holders were
   * asked; throws TurnstileException NOT_FOUND when nobody holds the lock.
   */
  public int requestRelease(String name, String reason) throws InterruptedException {
    CompletableFuture<Integer> asked = session().thenCompose(s -> s.requestRelease(name, reason));
    try {
      return asked.get();
    } catch (java.util.concurrent.ExecutionException e) {
      throw Futures.turnstileCause(e);
    }
  }

  /**
   * Whether {@code fencingToken} is still current for {@code name} (LockService.CheckFence,
   * authorized as read), for a resource about to do something irreversible (docs/fencing.md).
   * Throws a TurnstileException when the call fails.
   */
  public FenceCheck checkFence(String name, long fencingToken) {
    return FenceCheck.ask(context(), name, fencingToken);
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
    AcquireOptions scoped = inScope(options); // read on the caller's thread
    return onSession("\"" + name + "\"", scoped, s -> s.acquire(name, mode, limit, scoped), Lock::releaseAsync);
  }

  // Sends an acquire once the session is open (within wait + grace for a finite wait); cancelling
  // the result withdraws it, and a grant that arrives after the result is done goes to giveBack.
  private <T> CompletableFuture<T> onSession(String subject, AcquireOptions options,
      Function<Session, CompletableFuture<T>> send, Consumer<T> giveBack) {
    CompletableFuture<T> result = new CompletableFuture<>();
    CompletableFuture<Session> opening = session();
    if (options.waitTime() != null && !opening.isDone()) giveUpBeforeOpen(result, opening, subject, options.waitTime());
    opening.whenComplete((s, error) -> {
      if (result.isDone()) return; // given up on (or cancelled) before the session opened: nothing sent
      if (error != null) {
        result.completeExceptionally(Futures.turnstileCause(error));
        return;
      }
      CompletableFuture<T> inner = send.apply(s);
      result.whenComplete((granted, e) -> {
        if (result.isCancelled()) inner.cancel(true);
      });
      inner.whenComplete((granted, e) -> {
        if (e != null) result.completeExceptionally(e);
        else if (!result.complete(granted)) giveBack.accept(granted);
      });
    });
    return result;
  }

  // The client's own deadline before anything is sent: no session by wait + grace fails CONNECTION
  // (no coordinator answered the open), naming the addresses.
  private void giveUpBeforeOpen(CompletableFuture<?> result, CompletableFuture<Session> opening, String subject, Duration wait) {
    long giveUpMs = wait.toMillis() + AcquireDeadlines.ANSWER_GRACE_MS;
    TurnstileException timeout = new TurnstileException(Reason.CONNECTION, subject
        + ": no coordinator answered the session's open within acquire.wait of " + wait.toMillis() + " ms + "
        + AcquireDeadlines.ANSWER_GRACE_MS + " ms (tried " + String.join(", ", addresses) + "); nothing was sent", null);
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
