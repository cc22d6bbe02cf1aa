package io.github.turnstilelocks.client;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import turnstile.v1.Turnstile.KeepAlive;
import turnstile.v1.Turnstile.KeepAliveAck;
import turnstile.v1.Turnstile.SessionRequest;

/**
 * A session's keepalives: {@code keep_alive{seq}} every ttl/3 on the client's timer (the TTL re-read
 * each time: an ack may change it), each send time noted on the lease clock just before the write;
 * an ack confirms the lease up to its keepalive's send time and re-arms every lock's timer.
 * Works under the session's monitor.
 */
final class SessionKeepAlive {
  private final Session session;
  private long seq; // guarded by session.mu
  private ScheduledFuture<?> next; // guarded by session.mu

  SessionKeepAlive(Session session) {
    this.session = session;
  }

  /** Schedules the next keepalive unless the session ended. */
  void schedule() {
    synchronized (session.mu) {
      if (session.ended != null) return;
      next = session.ctx.timers().schedule(this::send, session.clock.ttlNanos() / 3, TimeUnit.NANOSECONDS);
    }
  }

  /** Stops sending; call with the session's monitor held, when the session ends. */
  void stop() {
    if (next != null) next.cancel(false);
  }

  /** Applies {@code keep_alive_ack}: the lease is confirmed as of that keepalive's send time. */
  void acked(KeepAliveAck ack) {
    synchronized (session.mu) {
      session.clock.keepAliveAcked(ack.getSeq());
      long ttlNanos = ProtoDuration.toNanos(ack.getTtl());
      if (ttlNanos > 0) session.clock.setTtlNanos(ttlNanos);
    }
    session.held.rearmAll(); // deadlines moved forward (a `lost` for an expired hold came before this ack)
  }

  private void send() {
    long current;
    synchronized (session.mu) {
      if (session.ended != null) return;
      current = ++seq;
      session.clock.keepAliveSent(current);
    }
    session.send(SessionRequest.newBuilder().setKeepAlive(KeepAlive.newBuilder().setSeq(current)).build());
    schedule();
  }
}
