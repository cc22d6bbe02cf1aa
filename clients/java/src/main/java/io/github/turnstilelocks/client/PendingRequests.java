package io.github.turnstilelocks.client;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import turnstile.v1.Turnstile.HeldLock;
import turnstile.v1.Turnstile.SessionRequest;
import turnstile.v1.Turnstile.SessionResponse;

/**
 * A session's requests in flight, by request_id (ids are unique for the session's lifetime). Not
 * thread-safe: Session guards it with its monitor.
 */
final class PendingRequests {
  /** The server's answer to a request; {@code lock} is set for a grant, {@code locks} for a set's. */
  record Answer(SessionResponse reply, Lock lock, List<Lock> locks) {
    Answer(SessionResponse reply, Lock lock) {
      this(reply, lock, List.of());
    }
  }

  /** One request in flight; {@code owner} is set for an acquire. */
  static final class Pending {
    final String requestId;
    final String owner;
    /** Completes with the answer, or exceptionally with the TurnstileException that ended the session. */
    final CompletableFuture<Answer> answer = new CompletableFuture<>();
    long sentNanos;
    /** The caller gave up (cancel sent): a grant that raced it is released at once. */
    boolean abandoned;
    /** What a resume sends again: the request as first sent. */
    SessionRequest request;
    /** For an acquire with a finite wait: the nanoTime it ends (a resume sends what is left; AcquireDeadlines gives up a grace later). */
    Long waitEndNanos;
    /** For a release: the hold it drops, claimed on resume while the release is in flight. */
    HeldLock releasing;
    /** Run (once) when the acquire is queued: a campaign asking the leader to yield. */
    Runnable onQueued;

    private Pending(String requestId, String owner) {
      this.requestId = requestId;
      this.owner = owner;
    }
  }

  private final Map<String, Pending> byId = new HashMap<>();
  private long nextId;

  /** The id the next {@link #add} gives: a request is measured with it before it is registered. */
  String nextRequestId() {
    return Long.toString(nextId + 1);
  }

  /** Registers a new request with a fresh id. */
  Pending add(String owner) {
    Pending pending = new Pending(Long.toString(++nextId), owner);
    byId.put(pending.requestId, pending);
    return pending;
  }

  /** Removes and returns the request answered now, or null for an unknown id. */
  Pending take(String requestId) {
    return byId.remove(requestId);
  }

  /** The request in flight with this id, or null. */
  Pending get(String requestId) {
    return byId.get(requestId);
  }

  boolean contains(Pending p) {
    return byId.get(p.requestId) == p;
  }

  /** Removes and returns every request (the session ended). */
  List<Pending> takeAll() {
    List<Pending> all = new ArrayList<>(byId.values());
    byId.clear();
    return all;
  }

  /** Every request in flight, for a resume to claim and send again. */
  List<Pending> all() {
    return new ArrayList<>(byId.values());
  }

  /** The releases in flight, as resume claims per holder (hold_count = releases of it in flight). */
  Map<HeldLocks.Key, HeldLock> releasesInFlight() {
    Map<HeldLocks.Key, HeldLock> claims = new HashMap<>();
    for (Pending p : byId.values()) {
      if (p.releasing == null) continue;
      claims.merge(new HeldLocks.Key(p.releasing.getName(), p.releasing.getOwner()), p.releasing,
          (a, b) -> a.toBuilder().setHoldCount(a.getHoldCount() + b.getHoldCount()).build());
    }
    return claims;
  }
}
