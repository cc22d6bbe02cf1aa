package turnstile.example;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import turnstile.v1.LockServiceGrpc.LockServiceStub;
import turnstile.v1.Turnstile.Open;
import turnstile.v1.Turnstile.Opened;
import turnstile.v1.Turnstile.SessionRequest;
import turnstile.v1.Turnstile.SessionResponse;

/**
 * One Session stream of a session (a resume replaces it with another): sends {@code open} and
 * waits for {@code opened}, then hands every other message to {@code onMessage} and its end (the
 * error, or null when the server completed it) to {@code onEnd}.
 */
final class SessionStream {
  private final ClientCallStreamObserver<SessionRequest> requests;
  private final CompletableFuture<Opened> opened = new CompletableFuture<>();
  /** Completes when the stream is over, either way. */
  final CompletableFuture<Void> done = new CompletableFuture<>();
  /** nanoTime just before the {@code open} was written: what its renewal counts from. */
  long openSentNanos;

  SessionStream(LockServiceStub stub, Consumer<SessionResponse> onMessage, BiConsumer<SessionStream, Throwable> onEnd) {
    requests = (ClientCallStreamObserver<SessionRequest>) stub.session(new StreamObserver<>() {
      @Override
      public void onNext(SessionResponse reply) {
        if (reply.hasOpened()) opened.complete(reply.getOpened());
        else onMessage.accept(reply);
      }

      @Override
      public void onError(Throwable error) {
        opened.completeExceptionally(error);
        done.complete(null);
        onEnd.accept(SessionStream.this, error);
      }

      @Override
      public void onCompleted() {
        opened.completeExceptionally(new SessionEndedException("session stream ended by the server", null));
        done.complete(null);
        onEnd.accept(SessionStream.this, null);
      }
    });
  }

  /**
   * Sends {@code open} and waits up to {@code timeout} for {@code opened}. Throws the error that
   * ended the stream first (a StatusRuntimeException from the server), or TimeoutException.
   */
  Opened open(Open open, Duration timeout) throws Exception {
    openSentNanos = System.nanoTime();
    send(SessionRequest.newBuilder().setOpen(open).build());
    try {
      return opened.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    } catch (TimeoutException | InterruptedException e) {
      cancel("open timed out");
      throw e;
    }
  }

  void send(SessionRequest request) {
    // StreamObserver is not thread-safe: one writer at a time.
    synchronized (requests) {
      try {
        requests.onNext(request);
      } catch (RuntimeException streamAlreadyOver) {
        // onError reports the end of the stream; a resume sends pending requests again.
      }
    }
  }

  void cancel(String why) {
    requests.cancel(why, null);
  }
}
