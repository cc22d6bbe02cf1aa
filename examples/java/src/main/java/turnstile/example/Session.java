package turnstile.example;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import turnstile.example.PendingRequests.Answer;
import turnstile.example.PendingRequests.Pending;
import turnstile.v1.LockServiceGrpc.LockServiceStub;
import turnstile.v1.Turnstile.Acquire;
import turnstile.v1.Turnstile.Acquired;
import turnstile.v1.Turnstile.Cancel;
import turnstile.v1.Turnstile.Close;
import turnstile.v1.Turnstile.KeepAlive;
import turnstile.v1.Turnstile.KeepAliveAck;
import turnstile.v1.Turnstile.LockMode;
import turnstile.v1.Turnstile.Open;
import turnstile.v1.Turnstile.Opened;
import turnstile.v1.Turnstile.Release;
import turnstile.v1.Turnstile.SessionRequest;
import turnstile.v1.Turnstile.SessionResponse;

/**
 * One Session stream: opened with {@code open}, kept alive every ttl/3, answers routed by
 * request_id, {@code lost} and local lease judgement applied to held locks. It does not reconnect:
 * when the stream ends every held lock is lost and every pending request fails.
 */
public final class Session implements AutoCloseable {
  private final Object mu = new Object();
  private final ClientCallStreamObserver<SessionRequest> requests;
  private final ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, runnable -> {
    Thread thread = new Thread(runnable, "turnstile-session-timers");
    thread.setDaemon(true);
    return thread;
  });
  private final CompletableFuture<Opened> opened = new CompletableFuture<>();
  private final CompletableFuture<Void> streamDone = new CompletableFuture<>();
  private final LeaseClock clock;
  private final HeldLocks held;
  private final PendingRequests pending = new PendingRequests();
  private long keepAliveSeq;
  private SessionEndedException ended;

  private Session(LockServiceStub stub, Duration ttl) {
    clock = new LeaseClock(ttl.toNanos());
    timers.setRemoveOnCancelPolicy(true);
    held = new HeldLocks(mu, clock, timers, lock -> sendRelease(lock.name(), lock.owner()));
    requests = (ClientCallStreamObserver<SessionRequest>) stub.session(new Responses());
  }

  /** Opens a session (requested TTL {@code ttl}, which the server may clamp), waiting for {@code opened}. */
  public static Session open(LockServiceStub stub, String clientName, Duration ttl, Duration timeout)
      throws InterruptedException, TimeoutException {
    Session session = new Session(stub, ttl);
    Open open = Open.newBuilder().setClientName(clientName).setTtl(ProtoDuration.of(ttl)).build();
    session.send(SessionRequest.newBuilder().setOpen(open).build());
    Opened opened;
    try {
      opened = session.opened.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw (SessionEndedException) e.getCause();
    } catch (TimeoutException | InterruptedException e) {
      session.requests.cancel("open timed out", null);
      throw e;
    }
    long grantedNanos = ProtoDuration.toNanos(opened.getTtl());
    synchronized (session.mu) {
      if (grantedNanos > 0) session.clock.setTtlNanos(grantedNanos);
    }
    session.scheduleKeepAlive();
    return session;
  }

  /** Acquires an exclusive lock; {@code wait} null waits forever, zero tries once. */
  public LockHandle acquire(String name, String owner, Duration wait)
      throws FailedException, LostLockException, InterruptedException {
    Acquire.Builder acquire = Acquire.newBuilder().setName(name).setOwner(owner).setMode(LockMode.LOCK_MODE_EXCLUSIVE);
    if (wait != null) acquire.setWait(ProtoDuration.of(wait));
    Pending p;
    synchronized (mu) {
      if (ended != null) throw ended;
      p = pending.add(owner);
      acquire.setRequestId(p.requestId);
      // Measured before the write, so the lease is judged from no later than the real send.
      p.sentNanos = System.nanoTime();
    }
    send(SessionRequest.newBuilder().setAcquire(acquire).build());
    LockHandle lock;
    try {
      lock = p.await().lock();
    } catch (InterruptedException e) {
      synchronized (mu) {
        p.abandoned = true;
      }
      send(SessionRequest.newBuilder().setCancel(Cancel.newBuilder().setRequestId(acquire.getRequestId())).build());
      // A grant already on its way when we gave up: hand it straight back.
      p.answer.thenAccept(late -> {
        if (late.lock() != null) releaseQuietly(late.lock());
      });
      throw e;
    }
    if (!lock.isValid()) {
      String reason = lock.endReason();
      throw new LostLockException(lock, reason == null ? LostLockException.LEASE_UNCONFIRMED : reason);
    }
    return lock;
  }

  void release(LockHandle lock) throws FailedException, LostLockException, InterruptedException {
    Pending p;
    synchronized (mu) {
      if (!held.beginRelease(lock)) return;
      if (ended != null) throw ended;
      p = pending.add(null);
    }
    Release release = Release.newBuilder().setRequestId(p.requestId).setName(lock.name()).setOwner(lock.owner()).build();
    send(SessionRequest.newBuilder().setRelease(release).build());
    p.await();
  }

  /** Sends {@code close} (the server releases everything) and waits up to 5 s for the stream to end. */
  @Override
  public void close() {
    end(new SessionEndedException("session closed by the client", null));
    send(SessionRequest.newBuilder().setClose(Close.getDefaultInstance()).build());
    try {
      streamDone.get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      requests.cancel("close interrupted", null);
    } catch (ExecutionException | TimeoutException e) {
      requests.cancel("close timed out", null);
    }
  }

  boolean isValid(LockHandle lock) {
    return held.isValid(lock);
  }

  String endReasonOf(LockHandle lock) {
    return held.endReasonOf(lock);
  }

  private final class Responses implements StreamObserver<SessionResponse> {
    @Override
    public void onNext(SessionResponse reply) {
      switch (reply.getKindCase()) {
        case OPENED -> opened.complete(reply.getOpened());
        case ACQUIRED -> onAcquired(reply);
        case RELEASED -> settle(reply.getReleased().getRequestId(), reply);
        case FAILED -> settle(reply.getFailed().getRequestId(), reply);
        case LOST -> held.lostReported(reply.getLost());
        case KEEP_ALIVE_ACK -> onKeepAliveAck(reply.getKeepAliveAck());
        default -> {
          // `queued` only reports a position; unknown kinds come from a newer server.
        }
      }
    }

    @Override
    public void onError(Throwable error) {
      end(new SessionEndedException("session stream failed: " + error.getMessage(), error));
      streamDone.complete(null);
    }

    @Override
    public void onCompleted() {
      end(new SessionEndedException("session stream ended by the server", null));
      streamDone.complete(null);
    }
  }

  // Runs on the response thread, so the lock is tracked before a `lost` right behind the grant.
  private void onAcquired(SessionResponse reply) {
    Acquired acquired = reply.getAcquired();
    Pending p;
    LockHandle lock = null;
    synchronized (mu) {
      p = pending.take(acquired.getRequestId());
      if (p == null || p.owner == null) return;
      if (!p.abandoned) {
        lock = new LockHandle(this, acquired.getName(), p.owner, acquired.getFencingToken(), p.sentNanos);
        held.add(lock);
      }
    }
    if (lock == null) sendRelease(acquired.getName(), p.owner);
    else p.answer.complete(new Answer(reply, lock));
  }

  private void settle(String requestId, SessionResponse reply) {
    Pending p;
    synchronized (mu) {
      p = pending.take(requestId);
    }
    if (p != null) p.answer.complete(new Answer(reply, null));
  }

  private void onKeepAliveAck(KeepAliveAck ack) {
    synchronized (mu) {
      clock.keepAliveAcked(ack.getSeq());
      long ttlNanos = ProtoDuration.toNanos(ack.getTtl());
      if (ttlNanos > 0) clock.setTtlNanos(ttlNanos);
    }
    // Deadlines moved forward (a `lost` for an expired hold came before this ack).
    held.rearmAll();
  }

  // Sends keep_alive{seq} every ttl/3, re-reading the TTL each time (an ack may change it).
  private void scheduleKeepAlive() {
    synchronized (mu) {
      if (ended != null) return;
      timers.schedule(this::keepAlive, clock.ttlNanos() / 3, TimeUnit.NANOSECONDS);
    }
  }

  private void keepAlive() {
    long seq;
    synchronized (mu) {
      if (ended != null) return;
      seq = ++keepAliveSeq;
      clock.keepAliveSent(seq);
    }
    send(SessionRequest.newBuilder().setKeepAlive(KeepAlive.newBuilder().setSeq(seq)).build());
    scheduleKeepAlive();
  }

  private void releaseQuietly(LockHandle lock) {
    try {
      if (held.beginRelease(lock)) sendRelease(lock.name(), lock.owner());
    } catch (LostLockException alreadyLost) {
      // Nothing to give back.
    }
  }

  // A release nobody waits for (a lease judged lost, a grant given up on).
  private void sendRelease(String name, String owner) {
    String requestId;
    synchronized (mu) {
      if (ended != null) return;
      requestId = pending.unansweredId();
    }
    Release release = Release.newBuilder().setRequestId(requestId).setName(name).setOwner(owner).build();
    send(SessionRequest.newBuilder().setRelease(release).build());
  }

  /** Ends the session: held locks are lost first (told first), then pending requests fail. */
  private void end(SessionEndedException error) {
    List<Pending> failed;
    synchronized (mu) {
      if (ended != null) return;
      ended = error;
      held.loseAll(LostLockException.SESSION_ENDED);
      failed = pending.takeAll();
    }
    timers.shutdownNow();
    opened.completeExceptionally(error);
    for (Pending p : failed) p.answer.completeExceptionally(error);
  }

  private void send(SessionRequest request) {
    // StreamObserver is not thread-safe: one writer at a time.
    synchronized (requests) {
      try {
        requests.onNext(request);
      } catch (RuntimeException streamAlreadyOver) {
        // The response observer reports the end of the stream; nothing more to do here.
      }
    }
  }
}
