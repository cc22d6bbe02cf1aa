package turnstile.example;

/** The session stream is over (closed, or ended by the server or the network). */
public final class SessionEndedException extends RuntimeException {
  SessionEndedException(String message, Throwable cause) {
    super(message, cause);
  }
}
