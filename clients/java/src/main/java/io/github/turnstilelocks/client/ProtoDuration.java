package io.github.turnstilelocks.client;

import java.time.Duration;

/** Converts between java.time.Duration and google.protobuf.Duration. */
final class ProtoDuration {
  private ProtoDuration() {}

  static com.google.protobuf.Duration of(Duration duration) {
    return com.google.protobuf.Duration.newBuilder().setSeconds(duration.getSeconds()).setNanos(duration.getNano()).build();
  }

  static com.google.protobuf.Duration ofNanos(long nanos) {
    return of(Duration.ofNanos(nanos));
  }

  static long toNanos(com.google.protobuf.Duration duration) {
    return duration.getSeconds() * 1_000_000_000L + duration.getNanos();
  }

  static Duration toDuration(com.google.protobuf.Duration duration) {
    return Duration.ofSeconds(duration.getSeconds(), duration.getNanos());
  }
}
