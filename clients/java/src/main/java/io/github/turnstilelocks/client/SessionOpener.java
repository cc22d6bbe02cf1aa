package io.github.turnstilelocks.client;

import io.grpc.Status;
import io.github.turnstilelocks.client.TurnstileException.Reason;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import turnstile.v1.Turnstile.Open;
import turnstile.v1.Turnstile.Opened;

/**
 * Opens a new session: {@code open{client_name, ttl}} on each coordinator in turn (once each, each
 * within the open timeout) until one answers {@code opened}; then the session keeps itself alive.
 * Fails with CONNECTION naming the last error, or INVALID_ARGUMENT when the server refused the open.
 */
final class SessionOpener {
  private SessionOpener() {}

  static CompletableFuture<Session> open(ClientContext ctx) {
    Session session = new Session(ctx);
    Open open = Open.newBuilder().setClientName(ctx.clientName()).setTtl(ProtoDuration.of(ctx.ttl())).build();
    CompletableFuture<Session> result = new CompletableFuture<>();
    attempt(session, open, ctx.coordinators().size(), null, result);
    return result;
  }

  private static void attempt(Session session, Open open, int left, Throwable last, CompletableFuture<Session> result) {
    if (left == 0) {
      result.completeExceptionally(failure(last));
      return;
    }
    var channel = session.ctx.coordinators().nextChannel();
    SessionStream stream = session.newStream(turnstile.v1.LockServiceGrpc.newStub(channel));
    synchronized (session.mu) {
      session.stream = stream;
    }
    stream.open(open, session.ctx.openTimeout(), session.ctx.timers()).whenComplete((opened, failure) -> {
      Throwable error = failure instanceof TimeoutException ? noAnswer(channel.authority(), session.ctx.openTimeout()) : failure;
      if (error != null) {
        if (Status.fromThrowable(error).getCode() == Status.Code.INVALID_ARGUMENT) result.completeExceptionally(failure(error));
        else attempt(session, open, left - 1, error, result);
        return;
      }
      adopt(session, stream, opened);
      session.keepAlive.schedule();
      session.ctx.emit(new ClientEvent(ClientEvent.Kind.CONNECTED, opened.getSessionId(), 0, ""));
      if (!result.complete(session)) closeUnwanted(session, stream); // the client closed meanwhile
    });
  }

  // Not here: this runs on the stream's own callback, which close() would wait for.
  private static void closeUnwanted(Session session, SessionStream stream) {
    session.ctx.runOnCallbacks(session::close, () -> stream.cancel("client closed"));
  }

  private static void adopt(Session session, SessionStream stream, Opened opened) {
    synchronized (session.mu) {
      session.id = opened.getSessionId();
      session.secret = opened.getResumeSecret();
      long grantedNanos = ProtoDuration.toNanos(opened.getTtl());
      if (grantedNanos > 0) session.clock.setTtlNanos(grantedNanos);
      // The open is the session's first renewal: resuming makes sense until it + ttl.
      session.clock.confirm(stream.openSentNanos);
    }
  }

  /** What an open that ran into the open timeout says: the address that did not answer, and in how long. */
  private static TimeoutException noAnswer(String address, java.time.Duration openTimeout) {
    return new TimeoutException(address + " did not answer the session's open within " + openTimeout.toMillis()
        + " ms (coordinator stopped, blackholed, or not a Turnstile coordinator)");
  }

  private static TurnstileException failure(Throwable error) {
    Status status = Status.fromThrowable(error);
    if (status.getCode() == Status.Code.INVALID_ARGUMENT) {
      return new TurnstileException(Reason.INVALID_ARGUMENT, "open refused: " + status.getDescription(), error);
    }
    String why = error == null ? "no coordinator address" : status.getCode() == Status.Code.UNKNOWN
        ? String.valueOf(error.getMessage()) : status.getCode() + ": " + status.getDescription();
    return new TurnstileException(Reason.CONNECTION, "no coordinator opened a session (last: " + why + ")", error);
  }
}
