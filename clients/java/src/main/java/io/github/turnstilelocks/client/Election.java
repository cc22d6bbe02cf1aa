package io.github.turnstilelocks.client;

import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import turnstile.v1.LockServiceGrpc;
import turnstile.v1.Turnstile.DescribeRequest;
import turnstile.v1.Turnstile.Holder;
import turnstile.v1.Turnstile.LockMode;

/**
 * Leader election on one lock name (docs/elections.md): candidates {@link #campaign} (an exclusive
 * acquire carrying a value, first come first elected), anyone can ask for the {@link #leader()} or
 * {@link #observe} every change of leader, including "nobody" when there is none. Made by
 * {@link TurnstileClient#election}.
 */
public final class Election {
  /** The leader as observers see it: its session, owner, value (campaigned or proclaimed) and token. */
  public record Leader(String sessionId, String owner, byte[] value, long fencingToken) {
    /** The value as UTF-8 text. */
    public String valueText() {
      return new String(value, StandardCharsets.UTF_8);
    }

    static Leader of(Holder h) {
      return new Leader(h.getSessionId(), h.getOwner(), h.getValue().toByteArray(), h.getFencingToken());
    }

    boolean same(Leader other) {
      return other != null && fencingToken == other.fencingToken && sessionId.equals(other.sessionId)
          && owner.equals(other.owner) && java.util.Arrays.equals(value, other.value);
    }
  }

  private static final Duration DESCRIBE_DEADLINE = Duration.ofSeconds(10);
  private final TurnstileClient client;
  private final String name;

  Election(TurnstileClient client, String name) {
    this.client = client;
    this.name = name;
  }

  /** The lock name the election runs on. */
  public String name() {
    return name;
  }

  /**
   * Waits (at most {@code wait}; null: forever) until this candidate is elected, observers seeing
   * {@code value}. Throws TurnstileException (TIMEOUT, BUSY with a zero wait, LOST for a grant whose
   * lease had lapsed on arrival, ...); interrupted, it leaves the queue and throws InterruptedException.
   */
  public Leadership campaign(String value, Duration wait) throws InterruptedException {
    return campaign(value.getBytes(StandardCharsets.UTF_8), wait);
  }

  /** As {@link #campaign(String, Duration)} with a value of bytes. */
  public Leadership campaign(byte[] value, Duration wait) throws InterruptedException {
    AcquireOptions options = AcquireOptions.defaults().withWait(wait).withValue(value);
    Lock lock = Futures.await(client.acquireAsync(name, LockMode.LOCK_MODE_EXCLUSIVE, 0, options), Lock::releaseAsync);
    return new Leadership(lock, value);
  }

  /**
   * As {@link #campaign(byte[], Duration)} with options: {@link AcquireOptions#withPriority} ranks this
   * candidate, {@link AcquireOptions#withAskToYield} asks the leader to yield once queued (the
   * rolling-deploy recipe, docs/elections.md); the options' value is replaced by {@code value}.
   */
  public Leadership campaign(byte[] value, AcquireOptions options) throws InterruptedException {
    AcquireOptions o = options.withValue(value);
    Lock lock = Futures.await(client.acquireAsync(name, LockMode.LOCK_MODE_EXCLUSIVE, 0, o), Lock::releaseAsync);
    return new Leadership(lock, value);
  }

  /** The current leader (one Describe), or empty when nobody leads. */
  public Optional<Leader> leader() {
    var stub = LockServiceGrpc.newBlockingStub(client.context().coordinators().nextChannel())
        .withDeadlineAfter(DESCRIBE_DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
    try {
      return leaderOf(stub.describe(DescribeRequest.newBuilder().setName(name).build()).getHoldersList());
    } catch (StatusRuntimeException e) {
      throw LeaderWatch.failure(name, e);
    }
  }

  /**
   * Calls {@code listener} with every change of leader, starting with the current one (empty: no
   * leader), in order, on a client callback thread. A broken Watch stream is started again (with
   * backoff) on the next coordinator, and the next call reports the leader at that moment. Close
   * the returned handle to stop.
   */
  public AutoCloseable observe(Consumer<Optional<Leader>> listener) {
    LeaderWatch watch = new LeaderWatch(client.context(), name, listener);
    watch.start();
    return watch;
  }

  /** The holder with the smallest token (an election's lock has one), or empty. */
  static Optional<Leader> leaderOf(List<Holder> holders) {
    return holders.stream().min(Comparator.comparingLong(Holder::getFencingToken)).map(Leader::of);
  }
}
