package turnstile.example;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
import turnstile.v1.Turnstile.HeldLock;
import turnstile.v1.Turnstile.KeepAlive;
import turnstile.v1.Turnstile.KeepAliveAck;
import turnstile.v1.Turnstile.LockMode;
import turnstile.v1.Turnstile.Open;
import turnstile.v1.Turnstile.Opened;
import turnstile.v1.Turnstile.Release;
import turnstile.v1.Turnstile.SessionRequest;
import turnstile.v1.Turnstile.SessionResponse;

/**
 * One session: opened with {@code open}, kept alive every ttl/3, answers routed by request_id,
 * {@code lost} and local lease judgement applied to held locks. When its stream breaks with
 * UNAVAILABLE (a coordinator draining or gone) a {@link Resumer} resumes it on the next
 * coordinator within the lease, keeping its locks; when it cannot, every held lock is lost and
 * every pending request fails with SessionEndedException.
 */
public final class Session implements AutoCloseable {
  final Object mu = new Object();
  private final Coordinators coordinators;
  final String clientName;
  private final ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, runnable -> {
    Thread thread = new Thread(runnable, "turnstile-session-timers");
    thread.setDaemon(true);
    return thread;
  });
  final LeaseClock clock;
  final HeldLocks held;
  final PendingRequests pending = new PendingRequests();
  SessionStream stream; // guarded by mu: replaced on resume (Resumer)
  String id = "";
  String secret = "";
  private long keepAliveSeq;
  SessionEndedException ended;

  private Session(Coordinators coordinators, String clientName, Duration ttl) {
    this.coordinators = coordinators;
    this.clientName = clientName;
    clock = new LeaseClock(ttl.toNanos());
    timers.setRemoveOnCancelPolicy(true);
    held = new HeldLocks(mu, clock, timers, lock -> releaseQuietly(HeldLocks.claimOf(lock)));
  }

  /**
   * Opens a session (requested TTL {@code ttl}, which the server may clamp) on the first of the
   * coordinators that answers {@code opened} (each is tried once within {@code timeout}).
   */
  public static Session open(Coordinators coordinators, String clientName, Duration ttl, Duration timeout)
      throws Exception {
    Session session = new Session(coordinators, clientName, ttl);
    Open open = Open.newBuilder().setClientName(clientName).setTtl(ProtoDuration.of(ttl)).build();
    Exception last = new TimeoutException("no coordinator answered");
    for (int i = 0; i < coordinators.size(); i++) {
      SessionStream stream = session.newStream(coordinators.next());
      synchronized (session.mu) {
        session.stream = stream;
      }
      try {
        Opened opened = stream.open(open, timeout);
        synchronized (session.mu) {
          session.id = opened.getSessionId();
          session.secret = opened.getResumeSecret();
          long grantedNanos = ProtoDuration.toNanos(opened.getTtl());
          if (grantedNanos > 0) session.clock.setTtlNanos(grantedNanos);
          // The open is the session's first renewal: resuming makes sense until it + ttl.
          session.clock.confirm(stream.openSentNanos);
        }
        session.scheduleKeepAlive();
        return session;
      } catch (InterruptedException e) {
        throw e;
      } catch (Exception e) {
        last = e;
      }
    }
    throw last;
  }

  /** Acquires an exclusive lock; {@code wait} null waits forever, zero tries once. */
  public LockHandle acquire(String name, String owner, Duration wait)
      throws FailedException, LostLockException, InterruptedException {
    Acquire.Builder acquire = Acquire.newBuilder().setName(name).setOwner(owner).setMode(LockMode.LOCK_MODE_EXCLUSIVE);
    if (wait != null) acquire.setWait(ProtoDuration.of(wait));
    Pending p;
    SessionStream to;
    synchronized (mu) {
      if (ended != null) throw ended;
      p = pending.add(owner);
      acquire.setRequestId(p.requestId);
      // Measured before the write, so the lease is judged from no later than the real send.
      p.sentNanos = System.nanoTime();
      if (wait != null) p.waitEndNanos = p.sentNanos + wait.toNanos();
      p.request = SessionRequest.newBuilder().setAcquire(acquire).build();
      to = stream;
    }
    to.send(p.request);
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
    if (!held.beginRelease(lock)) return;
    sendRelease(HeldLocks.claimOf(lock)).await();
  }

  /** Sends {@code close} (the server releases everything) and waits up to 5 s for the stream to end. */
  @Override
  public void close() {
    end(new SessionEndedException("session closed by the client", null));
    SessionStream current;
    synchronized (mu) {
      current = stream;
    }
    current.send(SessionRequest.newBuilder().setClose(Close.getDefaultInstance()).build());
    try {
      current.done.get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      current.cancel("close interrupted");
    } catch (Exception e) {
      current.cancel("close timed out");
    }
  }

  SessionStream newStream(LockServiceStub stub) {
    return new SessionStream(stub, this::onMessage, this::onStreamEnd);
  }

  private void onMessage(SessionResponse reply) {
    switch (reply.getKindCase()) {
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

  private void onStreamEnd(SessionStream ended, Throwable error) {
    synchronized (mu) {
      if (ended != stream || this.ended != null) return;
    }
    if (Resumer.resumable(error)) {
      Thread resumer = new Thread(new Resumer(this, coordinators, error), "turnstile-resume");
      resumer.setDaemon(true);
      resumer.start();
    } else {
      end(new SessionEndedException(error == null ? "session stream ended by the server"
          : "session stream failed: " + error.getMessage(), error));
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
    if (lock == null) {
      releaseQuietly(HeldLock.newBuilder().setName(acquired.getName()).setOwner(p.owner)
          .setFencingToken(acquired.getFencingToken()).setHoldCount(1).build());
    } else {
      p.answer.complete(new Answer(reply, lock));
    }
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
      if (held.beginRelease(lock)) releaseQuietly(HeldLocks.claimOf(lock));
    } catch (LostLockException alreadyLost) {
      // Nothing to give back.
    }
  }

  private void releaseQuietly(HeldLock hold) { // nobody waits: a lease judged lost, a grant given up on
    try {
      sendRelease(hold);
    } catch (SessionEndedException over) {
      // The store lets the hold go when the ended session's lease runs out.
    }
  }

  // Sends a release of `hold` and returns its pending answer; a resume claims the hold meanwhile.
  private Pending sendRelease(HeldLock hold) {
    Pending p;
    SessionStream to;
    synchronized (mu) {
      if (ended != null) throw ended;
      p = pending.add(null);
      p.releasing = hold;
      Release release = Release.newBuilder().setRequestId(p.requestId).setName(hold.getName())
          .setOwner(hold.getOwner()).build();
      p.request = SessionRequest.newBuilder().setRelease(release).build();
      to = stream;
    }
    to.send(p.request);
    return p;
  }

  /** Ends the session: held locks are lost first (told first), then pending requests fail. */
  void end(SessionEndedException error) {
    List<Pending> failed;
    synchronized (mu) {
      if (ended != null) return;
      ended = error;
      held.loseAll(LostLockException.SESSION_ENDED);
      failed = pending.takeAll();
    }
    timers.shutdownNow();
    for (Pending p : failed) p.answer.completeExceptionally(error);
  }

  private void send(SessionRequest request) {
    SessionStream to;
    synchronized (mu) {
      to = stream;
    }
    to.send(request);
  }
}
