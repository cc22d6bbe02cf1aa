package io.github.turnstilelocks.client;

import io.github.turnstilelocks.client.PendingRequests.Pending;
import io.github.turnstilelocks.client.TurnstileException.Reason;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import turnstile.v1.Turnstile.Cancel;
import turnstile.v1.Turnstile.SessionRequest;

/**
 * The client's own deadline of a session's acquires with a finite wait (docs/protocol.md, *The
 * client's own deadline*): one sweep on the client's timer thread, every {@value #DEADLINE_SWEEP_MS}
 * ms while such an acquire is in flight (no timer per acquire), gives up on each acquire still
 * unanswered {@value #ANSWER_GRACE_MS} ms after its wait: it fails TIMEOUT and a {@code cancel} is
 * sent. The request stays registered (abandoned), so a grant that arrives later is released and a
 * resume re-sends it as a try-once plus cancel: an unknown outcome is withdrawn, never left held.
 * Works under the session's monitor.
 */
final class AcquireDeadlines {
  /** How long after its wait an acquire still waits for the coordinator's answer, in ms (as the TS client). */
  static final long ANSWER_GRACE_MS = 1000;
  /** How often the deadlines are checked while an acquire with a finite wait is in flight, in ms. */
  static final long DEADLINE_SWEEP_MS = 100;

  private final Session session;
  private ScheduledFuture<?> sweep; // guarded by session.mu

  AcquireDeadlines(Session session) {
    this.session = session;
  }

  /** The nanoTime an acquire whose wait ends at {@code waitEndNanos} gives up: the grace later. */
  static long giveUpNanos(long waitEndNanos) {
    return waitEndNanos + TimeUnit.MILLISECONDS.toNanos(ANSWER_GRACE_MS);
  }

  /** An acquire with a finite wait was registered: make sure the sweep runs. Call with the monitor held. */
  void watch() {
    if (sweep != null || session.ended != null) return;
    try {
      sweep = session.ctx.timers().scheduleWithFixedDelay(this::sweep, DEADLINE_SWEEP_MS, DEADLINE_SWEEP_MS, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closing) {
      // The client is closing: its session ends and fails every pending request.
    }
  }

  /** Stops the sweep (nothing left to watch, or the session ended). Call with the monitor held. */
  void stop() {
    if (sweep != null) sweep.cancel(false);
    sweep = null;
  }

  private void sweep() {
    List<Pending> expired = new ArrayList<>();
    long now = System.nanoTime();
    synchronized (session.mu) {
      boolean waiting = false;
      for (Pending p : session.pending.all()) {
        if (p.abandoned || p.waitEndNanos == null) continue;
        if (giveUpNanos(p.waitEndNanos) - now > 0) {
          waiting = true;
          continue;
        }
        p.abandoned = true;
        expired.add(p);
      }
      if (!waiting) stop();
    }
    for (Pending p : expired) {
      long waitMs = TimeUnit.NANOSECONDS.toMillis(p.waitEndNanos - p.sentNanos);
      boolean set = p.request.hasAcquireAll();
      String subject = set ? "" : "\"" + p.request.getAcquire().getName() + "\": ";
      p.answer.completeExceptionally(new TurnstileException(Reason.TIMEOUT, subject + "no answer within "
          + (set ? "acquire_all" : "acquire") + ".wait of " + waitMs + " ms + " + ANSWER_GRACE_MS
          + " ms (coordinator unreachable or its store stalled); the acquire was withdrawn", null));
      session.send(SessionRequest.newBuilder().setCancel(Cancel.newBuilder().setRequestId(p.requestId)).build());
    }
  }
}
