package io.github.turnstilelocks.client;

import io.github.turnstilelocks.client.Election.Leader;
import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import turnstile.v1.LockServiceGrpc;
import turnstile.v1.Turnstile.Holder;
import turnstile.v1.Turnstile.HolderChange;
import turnstile.v1.Turnstile.HolderEvent;
import turnstile.v1.Turnstile.WatchRequest;
import turnstile.v1.Turnstile.WatchResponse;

/**
 * One {@link Election#observe} subscription: a Watch stream of the election's name whose snapshot
 * and holder events are applied to a holders map, the leader (smallest token) reported when it
 * changes. A broken stream is watched again with backoff on the next coordinator; a bad name or a
 * server without Watch ends it. Calls to the listener are chained, so they arrive in order.
 */
final class LeaderWatch implements AutoCloseable {
  private static final long FIRST_BACKOFF_MS = 100;
  private static final long MAX_BACKOFF_MS = 2000;

  private final ClientContext ctx;
  private final String name;
  private final Consumer<Optional<Leader>> listener;
  private final Map<String, Holder> holders = new LinkedHashMap<>();
  private CompletableFuture<Void> delivered = CompletableFuture.completedFuture(null);
  private Optional<Leader> last; // null before the first report
  private ClientCallStreamObserver<WatchRequest> call;
  private long backoffMs = FIRST_BACKOFF_MS;
  private volatile boolean closed;

  LeaderWatch(ClientContext ctx, String name, Consumer<Optional<Leader>> listener) {
    this.ctx = ctx;
    this.name = name;
    this.listener = listener;
  }

  synchronized void start() {
    if (closed) return;
    holders.clear();
    LockServiceGrpc.newStub(ctx.coordinators().nextChannel()).watch(WatchRequest.newBuilder().setName(name).build(),
        new ClientResponseObserver<WatchRequest, WatchResponse>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<WatchRequest> requests) {
            call = requests;
          }

          @Override
          public void onNext(WatchResponse response) {
            apply(response);
          }

          @Override
          public void onError(Throwable error) {
            restartAfter(error);
          }

          @Override
          public void onCompleted() {
            restartAfter(null);
          }
        });
  }

  private synchronized void apply(WatchResponse response) {
    backoffMs = FIRST_BACKOFF_MS;
    if (response.hasSnapshot()) {
      holders.clear();
      for (Holder h : response.getSnapshot().getHoldersList()) holders.put(key(h), h);
    } else if (response.hasEvent() && response.getEvent().hasHolder()) {
      HolderEvent event = response.getEvent();
      Holder h = event.getHolder();
      if (event.getChange() == HolderChange.HOLDER_CHANGE_TRANSFERRED) {
        // One change, old → new: never a moment without a leader.
        holders.remove(key(event.getFrom()));
        holders.put(key(h), h);
      } else if (event.getChange() == HolderChange.HOLDER_CHANGE_ACQUIRED || event.getChange() == HolderChange.HOLDER_CHANGE_VALUE) {
        holders.put(key(h), h);
      } else {
        holders.remove(key(h));
      }
      if (event.getNoHolder()) holders.clear();
    }
    Optional<Leader> leader = Election.leaderOf(holders.values().stream().toList());
    if (last != null && (leader.isEmpty() ? last.isEmpty() : leader.get().same(last.orElse(null)))) return;
    last = leader;
    try {
      delivered = delivered.thenRunAsync(() -> {
        if (!closed) listener.accept(leader);
      }, ctx.callbacks());
    } catch (RejectedExecutionException closing) {
      // The client is closing.
    }
  }

  private synchronized void restartAfter(Throwable error) {
    if (closed) return;
    Status.Code code = Status.fromThrowable(error).getCode();
    if (error != null && (code == Status.Code.INVALID_ARGUMENT || code == Status.Code.UNIMPLEMENTED)) return;
    long delay = (long) (backoffMs * (0.5 + Math.random() / 2));
    backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
    try {
      ctx.timers().schedule(this::start, delay, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closing) {
      // The client is closing.
    }
  }

  /** Stops observing: the Watch stream is cancelled and the listener is not called again. */
  @Override
  public synchronized void close() {
    closed = true;
    if (call != null) call.cancel("observer closed", null);
  }

  static TurnstileException failure(String name, StatusRuntimeException e) {
    return failure("describe", name, e);
  }

  /** A failed unary call ({@code what}: "describe", "checkFence") on {@code name} as a TurnstileException. */
  static TurnstileException failure(String what, String name, StatusRuntimeException e) {
    Reason reason = switch (e.getStatus().getCode()) {
      case INVALID_ARGUMENT -> Reason.INVALID_ARGUMENT;
      case PERMISSION_DENIED -> Reason.PERMISSION_DENIED;
      case UNAVAILABLE -> Reason.UNAVAILABLE;
      case DEADLINE_EXCEEDED, UNAUTHENTICATED -> Reason.CONNECTION;
      default -> Reason.INTERNAL;
    };
    return new TurnstileException(reason, what + " of \"" + name + "\" failed: " + e.getStatus().getDescription(), e);
  }

  private static String key(Holder h) {
    return h.getSessionId() + ":" + h.getOwner();
  }
}
