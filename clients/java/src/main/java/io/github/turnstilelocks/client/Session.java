package io.github.turnstilelocks.client;

import io.github.turnstilelocks.client.PendingRequests.Answer;
import io.github.turnstilelocks.client.PendingRequests.Pending;
import io.github.turnstilelocks.client.TurnstileException.Reason;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import turnstile.v1.Turnstile.Acquire;
import turnstile.v1.Turnstile.Acquired;
import turnstile.v1.Turnstile.Cancel;
import turnstile.v1.Turnstile.Close;
import turnstile.v1.Turnstile.HeldLock;
import turnstile.v1.Turnstile.Proclaim;
import turnstile.v1.Turnstile.Release;
import turnstile.v1.Turnstile.RequestRelease;
import turnstile.v1.Turnstile.Transfer;
import turnstile.v1.Turnstile.SessionRequest;
import turnstile.v1.Turnstile.SessionResponse;

/**
 * One session (docs/protocol.md): kept alive every ttl/3, answers routed by request_id, {@code lost}
 * and the local lease judgement applied to held locks. When its stream breaks with UNAVAILABLE a
 * {@link Resumer} resumes it on the next coordinator within the lease, keeping its locks; when it
 * cannot, every held lock is lost first and then every pending request fails with SESSION_ENDED.
 * Opened by {@link SessionOpener}.
 */
final class Session {
  final Object mu = new Object();
  final ClientContext ctx;
  final LeaseClock clock;
  final HeldLocks held;
  final PendingRequests pending = new PendingRequests();
  SessionStream stream; // guarded by mu: replaced on resume (Resumer)
  String id = "";
  String secret = "";
  TurnstileException ended; // guarded by mu
  final SessionKeepAlive keepAlive = new SessionKeepAlive(this);
  final AcquireDeadlines deadlines = new AcquireDeadlines(this); // acquires unanswered past wait + grace
  final SetAcquires sets = new SetAcquires(this);
  private long ownerSeq;

  Session(ClientContext ctx) {
    this.ctx = ctx;
    clock = new LeaseClock(ctx.ttl().toNanos());
    held = new HeldLocks(mu, clock, ctx.timers(), this::releaseQuietly);
  }

  Executor callbacks() {
    return ctx.callbacks();
  }

  boolean isEnded() {
    synchronized (mu) {
      return ended != null;
    }
  }

  /**
   * Sends an acquire; the future completes (on the callback pool) with the Lock, or a
   * TurnstileException (TIMEOUT at the latest wait + 1 s after the send for a finite wait, see
   * {@link AcquireDeadlines}). Cancelling it withdraws the acquire ({@code cancel}); a grant that
   * raced the cancel is released again.
   */
  CompletableFuture<Lock> acquire(String name, turnstile.v1.Turnstile.LockMode mode, int limit, AcquireOptions o) {
    CompletableFuture<Lock> result = new CompletableFuture<>();
    Acquire.Builder acquire = Acquire.newBuilder().setName(name).setMode(mode).setLimit(limit)
        .setValue(com.google.protobuf.ByteString.copyFrom(o.value()));
    if (o.waitTime() != null) acquire.setWait(ProtoDuration.of(o.waitTime()));
    if (o.lockDelay() != null) acquire.setLockDelay(ProtoDuration.of(o.lockDelay()));
    acquire.setPriority(o.priority());
    Pending p;
    SessionStream to;
    synchronized (mu) {
      if (ended != null) return CompletableFuture.failedFuture(ended);
      String owner = o.owner() != null ? o.owner() : newOwner();
      SessionRequest request = SessionRequest.newBuilder()
          .setAcquire(acquire.setRequestId(pending.nextRequestId()).setOwner(owner)).build();
      TurnstileException over = oversized("acquire", request);
      if (over != null) return CompletableFuture.failedFuture(over);
      p = pending.add(owner);
      // Measured before the write, so the lease is judged from no later than the real send.
      p.sentNanos = System.nanoTime();
      p.request = request;
      if (o.askToYield() != null) p.onQueued = () -> requestRelease(name, o.askToYield());
      if (o.waitTime() != null) {
        p.waitEndNanos = p.sentNanos + o.waitTime().toNanos();
        deadlines.watch();
      }
      to = stream;
    }
    p.answer.whenComplete((answer, error) -> {
      Runnable deliver;
      if (error != null) deliver = () -> result.completeExceptionally(error);
      else if (answer.reply().hasFailed()) deliver = () -> result.completeExceptionally(TurnstileException.fromFailed(answer.reply().getFailed()));
      else if (!answer.lock().isValid()) {
        // The grant came after its lease could no longer be confirmed (a stalled client or coordinator).
        deliver = () -> result.completeExceptionally(new TurnstileException(Reason.LOST,
            "\"" + name + "\": granted after its lease could no longer be confirmed", null));
      } else {
        deliver = () -> {
          if (!result.complete(answer.lock())) releaseQuietly(answer.lock());
        };
      }
      ctx.runOnCallbacks(deliver, () -> result.completeExceptionally(closed()));
    });
    result.whenComplete((lock, error) -> {
      if (result.isCancelled()) abandon(p);
    });
    to.send(p.request);
    return result;
  }

  /**
   * Sends a release of {@code lock}; completes when answered (at once when it is no longer held). A
   * release too large to send fails INVALID_ARGUMENT and leaves the lock held.
   */
  CompletableFuture<Void> releaseAsync(Lock lock) {
    Pending p;
    try {
      p = sendRelease(HeldLocks.claimOf(lock), lock);
    } catch (Oversized over) {
      return CompletableFuture.failedFuture(over.error);
    } catch (TurnstileException sessionEnded) {
      return CompletableFuture.completedFuture(null); // the store lets it go when the lease runs out
    }
    if (p == null) return CompletableFuture.completedFuture(null); // released or lost already
    return ctx.onCallbacks(p.answer.handle((answer, error) -> {
      if (error != null || !answer.reply().hasFailed()) return null;
      if (answer.reply().getFailed().getReason() == turnstile.v1.Turnstile.FailureReason.FAILURE_REASON_NOT_HELD) return null;
      throw TurnstileException.fromFailed(answer.reply().getFailed());
    }));
  }

  /** Replaces the value of {@code lock}'s hold (elections); fails LOST when it is no longer held. */
  CompletableFuture<Void> proclaim(Lock lock, byte[] value) {
    if (!lock.isValid()) {
      return CompletableFuture.failedFuture(new TurnstileException(Reason.LOST, lock + " is no longer held", null));
    }
    Pending p;
    SessionStream to;
    synchronized (mu) {
      if (ended != null) return CompletableFuture.failedFuture(ended);
      SessionRequest request = SessionRequest.newBuilder().setProclaim(Proclaim.newBuilder().setRequestId(pending.nextRequestId())
          .setName(lock.name()).setOwner(lock.owner()).setValue(com.google.protobuf.ByteString.copyFrom(value))).build();
      TurnstileException over = oversized("proclaim", request);
      if (over != null) return CompletableFuture.failedFuture(over);
      p = pending.add(null);
      p.request = request;
      to = stream;
    }
    to.send(p.request);
    return ctx.onCallbacks(p.answer.thenApply(answer -> {
      if (answer.reply().hasFailed()) throw TurnstileException.fromFailed(answer.reply().getFailed());
      return null;
    }));
  }

  /** Sends a Transfer of {@code lock}'s hold; completes with the successor once the coordinator made it. */
  CompletableFuture<Successor> transfer(Lock lock, String toSessionId, String toOwner) {
    if (!lock.isValid()) {
      return CompletableFuture.failedFuture(new TurnstileException(Reason.LOST, lock + " is no longer held", null));
    }
    Pending p;
    SessionStream to;
    synchronized (mu) {
      if (ended != null) return CompletableFuture.failedFuture(ended);
      SessionRequest request = SessionRequest.newBuilder().setTransfer(Transfer.newBuilder().setRequestId(pending.nextRequestId())
          .setName(lock.name()).setOwner(lock.owner()).setToSessionId(toSessionId).setToOwner(toOwner)).build();
      TurnstileException over = oversized("transfer", request);
      if (over != null) return CompletableFuture.failedFuture(over);
      p = pending.add(null);
      p.request = request;
      to = stream;
    }
    to.send(p.request);
    return ctx.onCallbacks(p.answer.thenApply(answer -> {
      if (answer.reply().hasFailed()) throw TurnstileException.fromFailed(answer.reply().getFailed());
      held.handedOver(lock);
      var t = answer.reply().getTransferred();
      return new Successor(t.getToSessionId(), t.getToOwner(), t.getFencingToken());
    }));
  }

  /** Sends a RequestRelease; completes with how many holders were asked. */
  CompletableFuture<Integer> requestRelease(String name, String reason) {
    Pending p;
    SessionStream to;
    synchronized (mu) {
      if (ended != null) return CompletableFuture.failedFuture(ended);
      SessionRequest request = SessionRequest.newBuilder().setRequestRelease(RequestRelease.newBuilder()
          .setRequestId(pending.nextRequestId()).setName(name).setReason(reason)).build();
      TurnstileException over = oversized("request_release", request);
      if (over != null) return CompletableFuture.failedFuture(over);
      p = pending.add(null);
      p.request = request;
      to = stream;
    }
    to.send(p.request);
    return ctx.onCallbacks(p.answer.thenApply(answer -> {
      if (answer.reply().hasFailed()) throw TurnstileException.fromFailed(answer.reply().getFailed());
      return answer.reply().getReleaseRequestSent().getHolders();
    }));
  }

  // An acquire was queued: a campaign that asks the leader to yield asks now (once).
  private void onQueued(String requestId) {
    Runnable ask;
    synchronized (mu) {
      Pending p = pending.get(requestId);
      ask = p == null ? null : p.onQueued;
      if (p != null) p.onQueued = null;
    }
    if (ask != null) ask.run();
  }

  /** Ends the session (locks lost first), sends {@code close} and waits up to 5 s for the stream to end. */
  void close() {
    end(new TurnstileException(Reason.SESSION_ENDED, "session closed by the client", null), false);
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

  SessionStream newStream(turnstile.v1.LockServiceGrpc.LockServiceStub stub) {
    return new SessionStream(stub, this::onMessage, this::onStreamEnd);
  }

  private void onMessage(SessionResponse reply) {
    switch (reply.getKindCase()) {
      case ACQUIRED -> onAcquired(reply);
      case ACQUIRED_ALL -> sets.onAcquiredAll(reply);
      case RELEASED -> settle(reply.getReleased().getRequestId(), reply);
      case PROCLAIMED -> settle(reply.getProclaimed().getRequestId(), reply);
      case TRANSFERRED -> settle(reply.getTransferred().getRequestId(), reply);
      case RELEASE_REQUEST_SENT -> settle(reply.getReleaseRequestSent().getRequestId(), reply);
      case RELEASE_REQUESTED -> held.releaseRequested(ReleaseRequest.of(reply.getReleaseRequested()));
      case QUEUED -> onQueued(reply.getQueued().getRequestId());
      case FAILED -> settle(reply.getFailed().getRequestId(), reply);
      case LOST -> held.lostReported(reply.getLost());
      case KEEP_ALIVE_ACK -> keepAlive.acked(reply.getKeepAliveAck());
      default -> {
        // Unknown kinds come from a newer server.
      }
    }
  }

  private void onStreamEnd(SessionStream endedStream, Throwable error) {
    synchronized (mu) {
      // A stream that failed while opening is the opener's business.
      if (endedStream != stream || ended != null || id.isEmpty()) return;
    }
    if (Resumer.resumable(error)) {
      ctx.emit(new ClientEvent(ClientEvent.Kind.RECONNECTING, id, held.size(), String.valueOf(error.getMessage())));
      ctx.runOnCallbacks(new Resumer(this, error), () -> {});
    } else {
      end(new TurnstileException(Reason.SESSION_ENDED, error == null ? "session stream ended by the server"
          : "session stream failed: " + error.getMessage(), error), true);
    }
  }

  // Runs on the response thread, so the lock is tracked before a `lost` right behind the grant.
  private void onAcquired(SessionResponse reply) {
    Acquired acquired = reply.getAcquired();
    Pending p;
    Lock lock = null;
    synchronized (mu) {
      p = pending.take(acquired.getRequestId());
      if (p == null || p.owner == null) return;
      if (!p.abandoned) {
        lock = new Lock(this, acquired.getName(), p.owner, acquired.getFencingToken(), acquired.getFencingProof(), acquired.getHoldCount(), p.sentNanos);
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

  /** A fresh owner, unique within the client: nothing re-enters by accident. Call with mu held. */
  String newOwner() {
    return ctx.clientName() + "#" + (++ownerSeq);
  }

  void abandon(Pending p) {
    synchronized (mu) {
      if (!pending.contains(p)) return;
      p.abandoned = true;
    }
    send(SessionRequest.newBuilder().setCancel(Cancel.newBuilder().setRequestId(p.requestId)).build());
  }

  private void releaseQuietly(Lock lock) {
    if (lock.lossReason != null) {
      // Judged lost locally: tell the store it may go (best effort), the handle is already over.
      releaseQuietly(HeldLocks.claimOf(lock));
    } else if (held.beginRelease(lock)) {
      releaseQuietly(HeldLocks.claimOf(lock));
    }
  }

  void releaseQuietly(HeldLock hold) { // nobody waits: a lease judged lost, a grant given up on
    try {
      sendRelease(hold, null);
    } catch (TurnstileException | Oversized over) {
      // Session ended: the store lets the hold go when its lease runs out. Too large to send (a
      // release outgrows its granted acquire only by its request id's digits): it goes with the session.
    }
  }

  // Sends a release of `hold` and returns its pending answer; a resume claims the hold meanwhile.
  // With `lock`, that handle stops being held first: null (nothing sent) when it was released or
  // lost already. Throws the session's end, or Oversized (nothing sent; `lock` still held).
  private Pending sendRelease(HeldLock hold, Lock lock) {
    Pending p;
    SessionStream to;
    synchronized (mu) {
      if (lock != null && (lock.released || lock.lossReason != null)) return null;
      if (ended != null) throw ended;
      Release release = Release.newBuilder().setRequestId(pending.nextRequestId()).setName(hold.getName()).setOwner(hold.getOwner()).build();
      SessionRequest request = SessionRequest.newBuilder().setRelease(release).build();
      TurnstileException over = oversized("release", request);
      if (over != null) throw new Oversized(over);
      if (lock != null && !held.beginRelease(lock)) return null;
      p = pending.add(null);
      p.releasing = hold;
      p.request = request;
      to = stream;
    }
    to.send(p.request);
    return p;
  }

  /**
   * The INVALID_ARGUMENT failure of {@code request} when its encoded size is over the client's
   * maxRequestBytes, else null. A coordinator fails the whole session stream (RESOURCE_EXHAUSTED) over
   * a message larger than its --max-message-bytes, losing every lock, so such a request is never
   * registered or sent: its call alone fails. {@code kind} names the request as the protocol does.
   */
  TurnstileException oversized(String kind, SessionRequest request) {
    int size = request.getSerializedSize();
    int max = ctx.maxRequestBytes();
    if (size <= max) return null;
    return new TurnstileException(Reason.INVALID_ARGUMENT, kind + " request: " + size + " bytes, over the " + max
        + "-byte maximum a coordinator reads (serve --max-message-bytes; client option maxRequestBytes); nothing was sent", null);
  }

  /** A release too large to send, told apart from the session's end (sendRelease throws both). */
  private static final class Oversized extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient TurnstileException error;

    Oversized(TurnstileException error) {
      super(error.getMessage(), error, false, false);
      this.error = error;
    }
  }

  /** Ends the session: held locks are lost first (told first), then pending requests fail. */
  void end(TurnstileException error, boolean expired) {
    List<Pending> failed;
    synchronized (mu) {
      if (ended != null) return;
      ended = error;
      keepAlive.stop();
      deadlines.stop();
      held.loseAll(LossReason.SESSION_ENDED);
      failed = pending.takeAll();
    }
    for (Pending p : failed) p.answer.completeExceptionally(error);
    if (expired) ctx.emit(new ClientEvent(ClientEvent.Kind.EXPIRED, id, 0, error.getMessage()));
  }

  void send(SessionRequest request) {
    SessionStream to;
    synchronized (mu) {
      to = stream;
    }
    to.send(request);
  }

  private static TurnstileException closed() {
    return new TurnstileException(Reason.SESSION_ENDED, "the client is closed", null);
  }
}
