package turnstile.example;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import turnstile.example.PendingRequests.Answer;
import turnstile.example.PendingRequests.Pending;
import turnstile.v1.Turnstile.Acquire;
import turnstile.v1.Turnstile.HeldLock;
import turnstile.v1.Turnstile.Open;
import turnstile.v1.Turnstile.Opened;
import turnstile.v1.Turnstile.SessionRequest;
import turnstile.v1.Turnstile.SessionResponse;

/**
 * Resumes a session whose stream broke with UNAVAILABLE (a coordinator draining or gone): opens
 * a stream on the next coordinator with {@code open{resume_session_id, resume_secret, held}},
 * with backoff, until one answers {@code opened{resumed}} or the lease runs out. Held locks stay
 * valid by their local lease meanwhile (docs/sessions.md). Works on the session's state under
 * its monitor.
 */
final class Resumer implements Runnable {
  private static final Duration OPEN_TIMEOUT = Duration.ofSeconds(5);
  private static final long FIRST_BACKOFF_MS = 50;
  private static final long MAX_BACKOFF_MS = 1000;

  private final Session session;
  private final Coordinators coordinators;
  private final Throwable cause;

  Resumer(Session session, Coordinators coordinators, Throwable cause) {
    this.session = session;
    this.coordinators = coordinators;
    this.cause = cause;
  }

  /** Whether a stream that ended with {@code error} may go on as the same session on another stream. */
  static boolean resumable(Throwable error) {
    return error != null && Status.fromThrowable(error).getCode() == Status.Code.UNAVAILABLE;
  }

  @Override
  public void run() {
    String id;
    synchronized (session.mu) {
      id = session.id;
    }
    Main.log("session " + id + ": stream ended (" + cause.getMessage() + "); resuming");
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
        session.end(new SessionEndedException("lease ran out while resuming: " + cause.getMessage(), cause));
        return;
      }
      SessionStream stream = session.newStream(coordinators.next());
      try {
        Opened opened = stream.open(open, OPEN_TIMEOUT);
        if (!opened.getResumed() || !opened.getSessionId().equals(id)) {
          stream.cancel("not resumed");
          throw new IllegalStateException("resume answered with a new session " + opened.getSessionId());
        }
        adopt(stream, opened);
        Main.log("session " + id + ": resumed with " + opened.getHeldCount() + " lock(s)");
        return;
      } catch (StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        if (code == Status.Code.NOT_FOUND || code == Status.Code.UNAUTHENTICATED) {
          session.end(new SessionEndedException("resume refused: " + e.getMessage(), e));
          return;
        }
        Main.log("session " + id + ": resume attempt failed: " + e.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception e) {
        Main.log("session " + id + ": resume attempt failed: " + e);
      }
      try {
        Thread.sleep(Math.min(backoffMs, Math.max(1, leftNanos / 1_000_000)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
    }
  }

  /** The {@code open} of a resume: the session's id and secret, and every hold it believes it has. */
  // Call with the session's monitor held.
  private Open resumeOpen() {
    List<HeldLock> claims = new ArrayList<>(session.held.claims());
    for (Pending p : session.pending.all()) if (p.releasing != null) claims.add(p.releasing);
    return Open.newBuilder().setClientName(session.clientName).setTtl(ProtoDuration.ofNanos(session.clock.ttlNanos()))
        .setResumeSessionId(session.id).setResumeSecret(session.secret).addAllHeld(claims).build();
  }

  /**
   * Makes a resumed stream current: claimed locks missing from {@code opened.held} are lost, the
   * rest renewed as of the open's send time; releases whose hold is gone are done, the others and
   * every pending acquire (same request_id, what is left of its wait) are sent again.
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
        } else if (p.request != null && p.request.hasAcquire() && p.waitEndNanos != null) {
          long leftNanos = Math.max(0, p.waitEndNanos - System.nanoTime());
          Acquire left = p.request.getAcquire().toBuilder().setWait(ProtoDuration.ofNanos(leftNanos)).build();
          resend.add(SessionRequest.newBuilder().setAcquire(left).build());
        } else if (p.request != null) {
          resend.add(p.request);
        }
      }
    }
    old.cancel("replaced by a resumed stream");
    for (Pending p : done) p.answer.complete(new Answer(SessionResponse.getDefaultInstance(), null));
    for (SessionRequest request : resend) resumed.send(request);
  }

  private static boolean sameHold(HeldLock a, HeldLock b) {
    return a.getName().equals(b.getName()) && a.getOwner().equals(b.getOwner());
  }
}
