package io.github.turnstilelocks.client;

/**
 * A change of the client's session, as given to {@link TurnstileClientBuilder#onEvent}: it opened
 * (CONNECTED), its stream broke and it is resuming elsewhere (RECONNECTING, locks still valid by
 * their local lease), it resumed on a coordinator with {@code locks} holds kept (RESUMED), or it
 * could not be resumed and every lock was lost (EXPIRED).
 */
public record ClientEvent(Kind kind, String sessionId, int locks, String detail) {
  /** What happened to the session. */
  public enum Kind {
    CONNECTED,
    RECONNECTING,
    RESUMED,
    EXPIRED
  }
}
