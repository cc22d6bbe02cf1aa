package io.github.turnstilelocks.client.harness;

import io.github.turnstilelocks.client.TurnstileClient;
import io.github.turnstilelocks.client.TurnstileClientBuilder;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import turnstile.v1.LockServiceGrpc;
import turnstile.v1.Turnstile.DescribeRequest;
import turnstile.v1.Turnstile.DescribeResponse;
import turnstile.v1.Turnstile.RevokeRequest;

/**
 * The suite's real parts: one redis-server and one coordinator, started once for the whole run
 * (by {@link FleetExtension}) and stopped after it. Tests that kill or drain coordinators start
 * their own on {@link #redisUrl()}.
 */
public final class Fleet implements AutoCloseable {
  private final RedisProcess redis;
  private final CoordinatorProcess coordinator;
  private final ManagedChannel admin;

  private Fleet(RedisProcess redis, CoordinatorProcess coordinator) {
    this.redis = redis;
    this.coordinator = coordinator;
    this.admin = ManagedChannelBuilder.forTarget(coordinator.address()).usePlaintext().build();
  }

  static Fleet start() throws Exception {
    RedisProcess redis = RedisProcess.start();
    try {
      return new Fleet(redis, CoordinatorProcess.start(redis.url()));
    } catch (Exception e) {
      redis.close();
      throw e;
    }
  }

  public String redisUrl() {
    return redis.url();
  }

  public String address() {
    return coordinator.address();
  }

  /** A client builder for the shared coordinator, named {@code name}. */
  public TurnstileClientBuilder client(String name) {
    return TurnstileClient.builder(address()).clientName(name);
  }

  /** Describe of {@code name} straight from the coordinator (not through any client under test). */
  public DescribeResponse describe(String name) {
    return LockServiceGrpc.newBlockingStub(admin).withDeadlineAfter(10, TimeUnit.SECONDS)
        .describe(DescribeRequest.newBuilder().setName(name).build());
  }

  /** Revokes the hold of ({@code sessionId}, {@code owner}) on {@code name}, as an operator would. */
  public void revoke(String name, String sessionId, String owner) {
    LockServiceGrpc.newBlockingStub(admin).withDeadlineAfter(10, TimeUnit.SECONDS)
        .revoke(RevokeRequest.newBuilder().setName(name).setSessionId(sessionId).setOwner(owner).build());
  }

  /** Waits until {@code name} has {@code count} waiters (Describe, re-read until true or 30 s). */
  public void awaitWaiters(String name, int count) throws InterruptedException {
    await("\"" + name + "\" to have " + count + " waiter(s)", () -> describe(name).getWaitersCount() == count);
  }

  /** Re-checks {@code condition} every 20 ms until it holds; fails naming it after 30 s. */
  public static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - end > 0) throw new AssertionError("timed out after 30 s waiting for " + what);
      Thread.sleep(20);
    }
  }

  @Override
  public void close() throws Exception {
    admin.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    try {
      coordinator.close();
    } finally {
      redis.close();
    }
  }
}
