package io.github.turnstilelocks.client;

import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import turnstile.v1.LockServiceGrpc;
import turnstile.v1.Turnstile.CheckFenceRequest;
import turnstile.v1.Turnstile.CheckFenceResponse;

/**
 * CheckFence's answer (docs/fencing.md): whether a fencing token is still current for a name, and
 * the newer token ({@code newerToken}, 0 otherwise) when it is superseded.
 */
public record FenceCheck(Status status, long newerToken) {
  private static final Duration DEADLINE = Duration.ofSeconds(10);

  /** CURRENT: a live hold has the token; SUPERSEDED: one has a newer token; UNKNOWN: neither (not current). */
  public enum Status {
    CURRENT,
    SUPERSEDED,
    UNKNOWN
  }

  /** One CheckFence call on the next coordinator; a failure is a TurnstileException. */
  static FenceCheck ask(ClientContext context, String name, long token) {
    var stub = LockServiceGrpc.newBlockingStub(context.coordinators().nextChannel())
        .withDeadlineAfter(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
    try {
      CheckFenceResponse r = stub.checkFence(CheckFenceRequest.newBuilder().setName(name).setFencingToken(token).build());
      return switch (r.getStatus()) {
        case FENCE_STATUS_CURRENT -> new FenceCheck(Status.CURRENT, 0);
        case FENCE_STATUS_SUPERSEDED -> new FenceCheck(Status.SUPERSEDED, r.getNewerFencingToken());
        default -> new FenceCheck(Status.UNKNOWN, 0);
      };
    } catch (StatusRuntimeException e) {
      throw LeaderWatch.failure("checkFence", name, e);
    }
  }
}
