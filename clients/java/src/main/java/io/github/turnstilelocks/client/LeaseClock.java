package io.github.turnstilelocks.client;

import java.util.HashMap;
import java.util.Map;

/**
 * The told-first lease arithmetic of one session (docs/protocol.md, "Judging the lease"), on
 * System.nanoTime(), a monotonic clock: a lock granted for an acquire sent at A is valid until
 * max(A, send time of the newest acknowledged keepalive) + ttl − margin. Not thread-safe: Session
 * guards it with its monitor.
 */
final class LeaseClock {
  private long ttlNanos;
  private boolean confirmed;
  private long lastConfirmedNanos;
  private final Map<Long, Long> keepAliveSentNanos = new HashMap<>();

  LeaseClock(long ttlNanos) {
    this.ttlNanos = ttlNanos;
  }

  long ttlNanos() {
    return ttlNanos;
  }

  void setTtlNanos(long ttlNanos) {
    this.ttlNanos = ttlNanos;
  }

  /** The margin for clock-rate differences between client and store: min(2 s, ttl/10). */
  long marginNanos() {
    return Math.min(2_000_000_000L, ttlNanos / 10);
  }

  /** Records that keepalive {@code seq} is sent now; call it just before the write. */
  void keepAliveSent(long seq) {
    keepAliveSentNanos.put(seq, System.nanoTime());
  }

  /** Records the ack of keepalive {@code seq}; acks come in order, so older seqs are dropped. */
  void keepAliveAcked(long seq) {
    Long sentAt = keepAliveSentNanos.get(seq);
    if (sentAt == null) return;
    keepAliveSentNanos.keySet().removeIf(pending -> pending <= seq);
    if (!confirmed || sentAt - lastConfirmedNanos > 0) {
      lastConfirmedNanos = sentAt;
      confirmed = true;
    }
  }

  /** The nanoTime at which a lock granted for an acquire sent at {@code acquireSentNanos} ends. */
  long deadlineNanos(long acquireSentNanos) {
    long base = confirmed && lastConfirmedNanos - acquireSentNanos > 0 ? lastConfirmedNanos : acquireSentNanos;
    return base + ttlNanos - marginNanos();
  }

  /**
   * Records that the server renewed every lease of the session as of {@code sentNanos} (the send
   * time of an {@code open} answered by {@code opened}), as an acked keepalive sent then would.
   */
  void confirm(long sentNanos) {
    if (!confirmed || sentNanos - lastConfirmedNanos > 0) {
      lastConfirmedNanos = sentNanos;
      confirmed = true;
    }
  }

  /** The nanoTime after which no coordinator can still hold the session: newest confirmation + ttl. */
  long sessionEndNanos() {
    return lastConfirmedNanos + ttlNanos;
  }
}
