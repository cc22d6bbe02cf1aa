package turnstile.example;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import turnstile.v1.Turnstile.Failed;
import turnstile.v1.Turnstile.HeldLock;
import turnstile.v1.Turnstile.SessionRequest;
import turnstile.v1.Turnstile.SessionResponse;

/**
 * A session's requests in flight, by request_id (ids are unique per session). Not thread-safe:
 * Session guards it with its monitor.
 */
final class PendingRequests {
  /** The server's answer to a request; {@code lock} is set for a grant. */
  record Answer(SessionResponse reply, LockHandle lock) {}

  /** One request in flight; {@code owner} is null for a release. */
  static final class Pending {
    final String requestId;
    final String owner;
    final CompletableFuture<Answer> answer = new CompletableFuture<>();
    long sentNanos;
    boolean abandoned;
    /** What a resume sends again: the acquire or release as first sent. */
    SessionRequest request;
    /** For an acquire with a finite wait: the nanoTime it ends (a resume sends what is left). */
    Long waitEndNanos;
    /** For a release: the hold it drops, claimed on resume while the release is in flight. */
    HeldLock releasing;

    private Pending(String requestId, String owner) {
      this.requestId = requestId;
      this.owner = owner;
    }

    /**
     * Waits for the answer: returns it, throws FailedException for {@code failed}, or the
     * SessionEndedException that ended the session first.
     */
    Answer await() throws FailedException, InterruptedException {
      Answer result;
      try {
        result = answer.get();
      } catch (ExecutionException e) {
        throw (SessionEndedException) e.getCause();
      }
      if (result.reply().hasFailed()) {
        Failed failed = result.reply().getFailed();
        throw new FailedException(failed.getReason(), failed.getMessage());
      }
      return result;
    }
  }

  private final Map<String, Pending> byId = new HashMap<>();
  private long nextId;

  /** Registers a new request with a fresh id. */
  Pending add(String owner) {
    Pending pending = new Pending(Long.toString(++nextId), owner);
    byId.put(pending.requestId, pending);
    return pending;
  }

  /** A fresh id for a request nobody waits for. */
  String unansweredId() {
    return Long.toString(++nextId);
  }

  /** Removes and returns the request answered now, or null for an unknown id. */
  Pending take(String requestId) {
    return byId.remove(requestId);
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
}
