package io.github.turnstilelocks.client;

import io.github.turnstilelocks.client.PendingRequests.Answer;
import io.github.turnstilelocks.client.PendingRequests.Pending;
import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import turnstile.v1.Turnstile.Cancel;
import turnstile.v1.Turnstile.HeldLock;
import turnstile.v1.Turnstile.Open;
import turnstile.v1.Turnstile.Opened;
import turnstile.v1.Turnstile.SessionRequest;
import turnstile.v1.Turnstile.SessionResponse;

/**
 * Resumes a session whose stream broke with UNAVAILABLE (a coordinator draining or gone): opens a
 * stream on the next coordinator with {@code open{resume_session_id, resume_secret, held}}, with
 * backoff, until one answers {@code opened{resumed}} or the lease runs out (docs/sessions.md).
 * Held locks stay valid by their local lease meanwhile. Runs on the client's callback pool.
 */
final class Resumer implements Runnable {
  private static final long FIRST_BACKOFF_MS = 50;
  private static final long MAX_BACKOFF_MS = 1000;

  private final Session session;
  private final Throwable cause;

  Resumer(Session session, Throwable cause) {
    this.session = session;
    this.cause = cause;
  }

  /** Whether a stream that ended with {@code error} may go on as the same session on another stream. */
  static boolean resumable(Throwable error) {
    return error != null && Status.fromThrowable(error).getCode() == Status.Code.UNAVAILABLE;
  }

  @Override
  public void run() {
    long backoffMs = FIRST_BACKOFF_MS;
    while (true) {
      long leftNanos;
      Open open;
      synchronized (session.mu) {
        if (session.ended != null) return;
        leftNanos = session.clock.sessionEndNanos() - System.nanoTime();
        open = resumeOpen();
      }
      if (leftNanos <= 0) {
        session.end(new TurnstileException(Reason.SESSION_ENDED, "lease ran out while resuming: " + cause.getMessage(), cause), true);
        return;
      }
      SessionStream stream = session.newStream(session.ctx.coordinators().next());
      try {
        Opened opened = stream.open(open, session.ctx.openTimeout(), session.ctx.timers()).get();
        if (!opened.getResumed() || !opened.getSessionId().equals(session.id)) {
          stream.cancel("not resumed");
          throw new IllegalStateException("resume answered with a new session " + opened.getSessionId());
        }
        adopt(stream, opened);
        session.ctx.emit(new ClientEvent(ClientEvent.Kind.RESUMED, session.id, opened.getHeldCount(), ""));
        return;
      } catch (ExecutionException e) {
        Status.Code code = Status.fromThrowable(e.getCause()).getCode();
        if (code == Status.Code.NOT_FOUND || code == Status.Code.UNAUTHENTICATED || code == Status.Code.PERMISSION_DENIED) {
          session.end(new TurnstileException(Reason.SESSION_ENDED, "resume refused: " + e.getCause().getMessage(), e.getCause()), true);
          return;
        }
      } catch (InterruptedException e) {
        stream.cancel("client closing");
        return; // the client is closing
      } catch (RuntimeException e) {
        // Try the next coordinator after the backoff.
      }
      try {
        TimeUnit.MILLISECONDS.sleep(Math.min(backoffMs, Math.max(1, leftNanos / 1_000_000)));
      } catch (InterruptedException e) {
        return;
      }
      backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
    }
  }

  /** The {@code open} of a resume: the session's id and secret, and every hold it believes it has. */
  // Call with the session's monitor held.
  private Open resumeOpen() {
    List<HeldLock> claims = session.held.claims(session.pending.releasesInFlight());
    return Open.newBuilder().setClientName(session.ctx.clientName()).setTtl(ProtoDuration.ofNanos(session.clock.ttlNanos()))
        .setResumeSessionId(session.id).setResumeSecret(session.secret).addAllHeld(claims).build();
  }

  /**
   * Makes a resumed stream current: claimed locks missing from {@code opened.held} are lost, the
   * rest renewed as of the open's send time; releases whose hold is gone are done, the others and
   * every pending acquire and proclaim (same request_id, what is left of its wait) are sent again.
   */
  private void adopt(SessionStream resumed, Opened opened) {
    List<SessionRequest> resend = new ArrayList<>();
    List<Pending> done = new ArrayList<>();
    SessionStream old;
    synchronized (session.mu) {
      old = session.stream;
      session.stream = resumed;
      long ttlNanos = ProtoDuration.toNanos(opened.getTtl());
      if (ttlNanos > 0) session.clock.setTtlNanos(ttlNanos);
      session.clock.confirm(resumed.openSentNanos);
      session.held.keepOnly(opened.getHeldList());
      for (Pending p : session.pending.all()) {
        if (p.releasing != null && opened.getHeldList().stream().noneMatch(h -> sameHold(h, p.releasing))) {
          done.add(session.pending.take(p.requestId));
        } else if (isAcquire(p.request) && p.abandoned) {
          // Given up on while away: a try-once then a cancel, so a grant that raced the break is
          // answered (and released) instead of the acquire waiting on in the queue.
          resend.add(withWaitNanos(p.request, 0));
          resend.add(SessionRequest.newBuilder().setCancel(Cancel.newBuilder().setRequestId(p.requestId)).build());
        } else if (isAcquire(p.request) && p.waitEndNanos != null) {
          resend.add(withWaitNanos(p.request, Math.max(0, p.waitEndNanos - System.nanoTime())));
        } else {
          resend.add(p.request);
        }
      }
    }
    old.cancel("replaced by a resumed stream");
    for (Pending p : done) p.answer.complete(new Answer(SessionResponse.getDefaultInstance(), null));
    for (SessionRequest request : resend) resumed.send(request);
    session.held.rearmAll();
  }

  private static boolean isAcquire(SessionRequest request) {
    return request.hasAcquire() || request.hasAcquireAll();
  }

  /** The acquire (or AcquireAll) {@code request} with its wait replaced: what a resume sends again. */
  private static SessionRequest withWaitNanos(SessionRequest request, long waitNanos) {
    if (request.hasAcquireAll()) {
      return SessionRequest.newBuilder().setAcquireAll(request.getAcquireAll().toBuilder().setWait(ProtoDuration.ofNanos(waitNanos))).build();
    }
    return SessionRequest.newBuilder().setAcquire(request.getAcquire().toBuilder().setWait(ProtoDuration.ofNanos(waitNanos))).build();
  }

  private static boolean sameHold(HeldLock a, HeldLock b) {
    return a.getName().equals(b.getName()) && a.getOwner().equals(b.getOwner());
  }
}
