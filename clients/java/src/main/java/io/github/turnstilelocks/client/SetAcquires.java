package io.github.turnstilelocks.client;

import io.github.turnstilelocks.client.PendingRequests.Answer;
import io.github.turnstilelocks.client.PendingRequests.Pending;
import io.github.turnstilelocks.client.TurnstileException.Reason;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import turnstile.v1.Turnstile.AcquireAll;
import turnstile.v1.Turnstile.Acquired;
import turnstile.v1.Turnstile.AcquiredAll;
import turnstile.v1.Turnstile.HeldLock;
import turnstile.v1.Turnstile.SessionRequest;
import turnstile.v1.Turnstile.SessionResponse;

/**
 * A session's AcquireAll requests (docs/multi-lock.md): sent, answered and withdrawn like its single
 * acquires (the same pending requests, the same client deadline and resume), but granted as a set of
 * locks at once. A set is never a re-entry (the coordinator refuses names its owner holds), so each
 * lock of a grant is a new hold; a grant its caller gave up on is released, every lock of it.
 */
final class SetAcquires {
  private final Session session;

  SetAcquires(Session session) {
    this.session = session;
  }

  /**
   * Sends an AcquireAll; the future completes (on the callback pool) with the set (its locks in
   * request order), or a TurnstileException. Cancelling it withdraws the set from every name.
   */
  CompletableFuture<LockSet> acquireAll(List<Claim> claims, AcquireOptions o) {
    CompletableFuture<LockSet> result = new CompletableFuture<>();
    AcquireAll.Builder set = AcquireAll.newBuilder().setValue(com.google.protobuf.ByteString.copyFrom(o.value()));
    for (Claim claim : claims) set.addLocks(claim.toProto());
    if (o.waitTime() != null) set.setWait(ProtoDuration.of(o.waitTime()));
    if (o.lockDelay() != null) set.setLockDelay(ProtoDuration.of(o.lockDelay()));
    Pending p;
    SessionStream to;
    synchronized (session.mu) {
      if (session.ended != null) return CompletableFuture.failedFuture(session.ended);
      String owner = o.owner() != null ? o.owner() : session.newOwner();
      SessionRequest request = SessionRequest.newBuilder()
          .setAcquireAll(set.setRequestId(session.pending.nextRequestId()).setOwner(owner)).build();
      TurnstileException over = session.oversized("acquire_all", request);
      if (over != null) return CompletableFuture.failedFuture(over);
      p = session.pending.add(owner);
      // Measured before the write, so the leases are judged from no later than the real send.
      p.sentNanos = System.nanoTime();
      p.request = request;
      if (o.waitTime() != null) {
        p.waitEndNanos = p.sentNanos + o.waitTime().toNanos();
        session.deadlines.watch();
      }
      to = session.stream;
    }
    p.answer.whenComplete((answer, error) -> {
      Runnable deliver;
      if (error != null) deliver = () -> result.completeExceptionally(error);
      else if (answer.reply().hasFailed()) deliver = () -> result.completeExceptionally(TurnstileException.fromFailed(answer.reply().getFailed()));
      else if (!answer.locks().stream().allMatch(Lock::isValid)) {
        // The grant came after its leases could no longer be confirmed (a stalled client or coordinator).
        answer.locks().forEach(Lock::releaseAsync);
        deliver = () -> result.completeExceptionally(new TurnstileException(Reason.LOST,
            "the set was granted after its leases could no longer be confirmed", null));
      } else {
        deliver = () -> {
          if (!result.complete(new LockSet(answer.locks()))) answer.locks().forEach(Lock::releaseAsync);
        };
      }
      session.ctx.runOnCallbacks(deliver, () -> result.completeExceptionally(
          new TurnstileException(Reason.SESSION_ENDED, "the client is closed", null)));
    });
    result.whenComplete((granted, error) -> {
      if (result.isCancelled()) session.abandon(p);
    });
    to.send(p.request);
    return result;
  }

  /** Runs on the response thread, so every lock is tracked before a {@code lost} right behind the grant. */
  void onAcquiredAll(SessionResponse reply) {
    AcquiredAll all = reply.getAcquiredAll();
    Pending p;
    List<Lock> locks = new ArrayList<>();
    synchronized (session.mu) {
      p = session.pending.take(all.getRequestId());
      if (p == null || p.owner == null) return;
      if (!p.abandoned) {
        for (Acquired acquired : all.getLocksList()) {
          Lock lock = new Lock(session, acquired.getName(), p.owner, acquired.getFencingToken(), acquired.getFencingProof(), acquired.getHoldCount(), p.sentNanos);
          session.held.add(lock);
          locks.add(lock);
        }
      }
    }
    if (p.abandoned) {
      for (Acquired acquired : all.getLocksList()) {
        session.releaseQuietly(HeldLock.newBuilder().setName(acquired.getName()).setOwner(p.owner)
            .setFencingToken(acquired.getFencingToken()).setHoldCount(1).build());
      }
    } else {
      p.answer.complete(new Answer(reply, null, locks));
    }
  }
}
