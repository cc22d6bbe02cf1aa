package io.github.turnstilelocks.client.harness;

import io.github.turnstilelocks.client.AcquireOptions;
import io.github.turnstilelocks.client.Claim;
import io.github.turnstilelocks.client.ClientEvent;
import io.github.turnstilelocks.client.Election.Leader;
import io.github.turnstilelocks.client.Leadership;
import io.github.turnstilelocks.client.Lock;
import io.github.turnstilelocks.client.LockSet;
import io.github.turnstilelocks.client.LossReason;
import io.github.turnstilelocks.client.ReleaseRequest;
import io.github.turnstilelocks.client.TurnstileClient;
import io.github.turnstilelocks.client.TurnstileClientBuilder;
import io.github.turnstilelocks.client.TurnstileException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import turnstile.v1.Turnstile.DescribeResponse;

/**
 * The Java driver of the shared client conformance suite (test/conformance/README.md): runs one
 * scenario file's steps against this client, the run's {@link Fleet} (its coordinator is "main") and
 * the coordinators the scenario asks for. A step that does not go as written throws an
 * AssertionError naming its number and JSON.
 */
public final class ScenarioDriver implements AutoCloseable {
  /** Bounds every wait of a step: long enough for 2 loaded cores, never a speed target. */
  private static final Duration STEP_BOUND = Duration.ofSeconds(20);

  private final Fleet fleet;
  private final ExecutorService calls = Executors.newCachedThreadPool(r -> {
    Thread thread = new Thread(r, "conformance-call");
    thread.setDaemon(true);
    return thread;
  });
  private final Map<String, String> addresses = new HashMap<>();
  private final Map<String, CoordinatorProcess> coordinators = new HashMap<>();
  private final Map<String, TcpProxy> proxies = new HashMap<>();
  private final Map<String, TurnstileClient> clients = new HashMap<>();
  private final Map<String, CompletableFuture<Void>> resumed = new HashMap<>();
  private final Map<String, Started> started = new HashMap<>();
  private final Map<String, Started> held = new HashMap<>();
  private final Map<String, AtomicReference<Optional<Optional<String>>>> observers = new HashMap<>();
  private final List<AutoCloseable> observing = new ArrayList<>();
  private final Map<String, BlockingQueue<ReleaseRequest>> requests = new HashMap<>();

  /** An acquire, acquireAll or campaign the scenario began, and how it ended. */
  private record Started(String client, String name, Future<?> call) {}

  public ScenarioDriver(Fleet fleet) {
    this.fleet = fleet;
    addresses.put("main", fleet.address());
  }

  /** Runs the scenario (a parsed scenario file) to its end, or throws naming the step that failed. */
  @SuppressWarnings("unchecked")
  public void run(Map<String, Object> scenario) throws Exception {
    for (Object id : (List<Object>) scenario.getOrDefault("coordinators", List.of())) {
      CoordinatorProcess coordinator = CoordinatorProcess.start(fleet.redisUrl());
      coordinators.put((String) id, coordinator);
      addresses.put((String) id, coordinator.address());
    }
    List<Object> steps = (List<Object>) scenario.get("steps");
    for (int i = 0; i < steps.size(); i++) {
      Map<String, Object> step = (Map<String, Object>) steps.get(i);
      try {
        step(step);
      } catch (Exception | AssertionError e) {
        throw new AssertionError("step " + (i + 1) + " " + step + ": " + e.getMessage(), e);
      }
    }
  }

  private void step(Map<String, Object> step) throws Exception {
    String op = step.keySet().iterator().next();
    String id = (String) step.get(op);
    switch (op) {
      case "open" -> open(id, step);
      case "proxy" -> {
        TcpProxy proxy = new TcpProxy(lookup(addresses, (String) step.get("to"), "coordinator"));
        proxies.put(id, proxy);
        addresses.put(id, proxy.address());
      }
      case "freeze" -> lookup(proxies, id, "proxy").freeze();
      case "cut" -> lookup(proxies, id, "proxy").close();
      case "acquire", "acquireAll", "campaign" -> start(op, id, step);
      case "await" -> check(id, lookup(started, id, "acquire"), step);
      case "pending" -> {
        if (lookup(started, id, "acquire").call().isDone()) throw new AssertionError("\"" + id + "\" was answered; expected it still waiting");
      }
      case "cancel" -> lookup(started, id, "acquire").call().cancel(true);
      case "release" -> release(id);
      case "lost" -> lost(id, step);
      case "valid" -> {
        Lock lock = lock(id);
        if (!lock.isValid() || lock.lost().isDone()) throw new AssertionError("\"" + id + "\" is no longer valid");
      }
      case "revoke" -> {
        Lock lock = lock(id);
        fleet.revoke(lock.name(), lookup(clients, lookup(held, id, "hold").client(), "client").sessionId(), lock.owner());
      }
      case "describe" -> describe(id, step);
      case "transfer" -> transfer(id, step);
      case "askRelease" -> askRelease(id, step);
      case "releaseRequested" -> releaseRequested(id, step);
      case "proclaim" -> leadership(id).proclaim((String) step.get("value"));
      case "resign" -> leadership(id).resign();
      case "observe" -> {
        AtomicReference<Optional<Optional<String>>> latest = new AtomicReference<>(Optional.empty());
        observers.put(id, latest);
        TurnstileClient client = lookup(clients, (String) step.get("client"), "client");
        observing.add(client.election((String) step.get("election"))
            .observe(leader -> latest.set(Optional.of(leader.map(Leader::valueText)))));
      }
      case "leader" -> {
        AtomicReference<Optional<Optional<String>>> latest = lookup(observers, id, "observer");
        Optional<Optional<String>> want = Optional.of(Optional.ofNullable((String) step.get("value")));
        eventually(() -> want.equals(latest.get()), () -> "observer \"" + id + "\" to see leader " + step.get("value") + " (sees " + latest.get() + ")");
      }
      case "drain" -> {
        int code = lookup(coordinators, id, "coordinator").drain();
        if (code != 0) throw new AssertionError("drained coordinator \"" + id + "\" exit code " + code);
      }
      case "kill" -> lookup(coordinators, id, "coordinator").crash();
      case "resumed" -> lookup(resumed, id, "client").get(STEP_BOUND.toMillis(), TimeUnit.MILLISECONDS);
      default -> throw new AssertionError("unknown operation \"" + op + "\"");
    }
  }

  @SuppressWarnings("unchecked")
  private void open(String id, Map<String, Object> step) {
    List<Object> via = (List<Object>) step.getOrDefault("via", List.of("main"));
    String[] targets = via.stream().map(name -> lookup(addresses, (String) name, "coordinator or proxy")).toArray(String[]::new);
    CompletableFuture<Void> wasResumed = new CompletableFuture<>();
    TurnstileClientBuilder builder = TurnstileClient.builder(targets).clientName(id).onEvent(event -> {
      if (event.kind() == ClientEvent.Kind.RESUMED) wasResumed.complete(null);
    });
    if (step.get("ttlMs") instanceof Long ttl) builder.ttl(Duration.ofMillis(ttl));
    // The client opens its session lazily, with its first request.
    clients.put(id, builder.build());
    resumed.put(id, wasResumed);
  }

  @SuppressWarnings("unchecked")
  private void start(String op, String id, Map<String, Object> step) throws Exception {
    String clientId = (String) step.get("client");
    TurnstileClient client = lookup(clients, clientId, "client");
    boolean tryOnce = Boolean.TRUE.equals(step.get("try"));
    AcquireOptions options = step.get("waitMs") instanceof Long wait ? AcquireOptions.waitAtMost(Duration.ofMillis(wait)) : AcquireOptions.defaults();
    if (step.get("owner") instanceof String owner) options = options.withOwner(owner);
    if (step.get("lockDelayMs") instanceof Long delay) options = options.withLockDelay(Duration.ofMillis(delay));
    if (step.get("priority") instanceof Long priority) options = options.withPriority(priority.intValue());
    if (step.get("askToYield") instanceof String reason) options = options.withAskToYield(reason);
    // The holder value: that many zero bytes (past the client's maximum request size: invalid-argument).
    if (step.get("valueBytes") instanceof Long size) options = options.withValue(new byte[Math.toIntExact(size)]);
    AcquireOptions opts = options;
    String name;
    Future<?> call;
    switch (op) {
      case "acquireAll" -> {
        List<String> names = (List<String>) (List<?>) step.get("names");
        name = names.get(0);
        List<Claim> claims = Claim.names(names.toArray(String[]::new));
        call = tryOnce ? attempt(() -> client.tryAcquireAll(claims, opts)) : client.acquireAllAsync(claims, opts);
      }
      case "campaign" -> {
        name = (String) step.get("election");
        String value = (String) step.get("value");
        byte[] bytes = value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        call = calls.submit(() -> client.election(name).campaign(bytes, opts));
      }
      default -> {
        name = (String) step.get("name");
        call = acquireOne(client, name, step, opts, tryOnce);
      }
    }
    Started s = new Started(clientId, name, call);
    started.put(id, s);
    Object expect = step.get("expect");
    if (expect instanceof Map<?, ?> e && e.get("queued") instanceof Long queued) {
      String on = e.get("on") instanceof String o ? o : name;
      AtomicReference<Integer> waiters = new AtomicReference<>();
      eventually(() -> {
        if (call.isDone()) throw new AssertionError("\"" + id + "\" did not queue: " + outcomeText(call));
        waiters.set(fleet.describe(on).getWaitersCount());
        return waiters.get() == queued.intValue();
      }, () -> "\"" + id + "\" to queue at position " + queued + " on \"" + on + "\" (waiters: " + waiters.get() + ")");
      return;
    }
    check(id, s, step);
  }

  private Future<?> acquireOne(TurnstileClient client, String name, Map<String, Object> step, AcquireOptions opts, boolean tryOnce) {
    Object kind = step.get("kind");
    if (kind == null) return tryOnce ? attempt(() -> client.tryAcquire(name, opts)) : client.acquireAsync(name, opts);
    switch ((String) kind) {
      case "semaphore" -> {
        var semaphore = client.semaphore(name, ((Long) step.get("limit")).intValue());
        return tryOnce ? attempt(semaphore::tryAcquire) : semaphore.acquireAsync(opts);
      }
      case "read" -> {
        return tryOnce ? attempt(() -> client.readWriteLock(name).tryRead()) : client.readWriteLock(name).readAsync(opts);
      }
      case "write" -> {
        return tryOnce ? attempt(() -> client.readWriteLock(name).tryWrite()) : client.readWriteLock(name).writeAsync(opts);
      }
      default -> throw new AssertionError("unknown kind \"" + kind + "\"");
    }
  }

  /** A try-once call, run now: its Optional.empty() (the lock is taken) counts as busy. */
  private Future<?> attempt(Attempt<Optional<?>> tryOnce) {
    CompletableFuture<Object> result = new CompletableFuture<>();
    try {
      Optional<?> got = tryOnce.call();
      if (got.isPresent()) result.complete(got.get());
      else result.completeExceptionally(new TurnstileException(TurnstileException.Reason.BUSY, "try: the lock is taken", null));
    } catch (Exception e) {
      result.completeExceptionally(e);
    }
    return result;
  }

  private interface Attempt<T> {
    T call() throws Exception;
  }

  /** What the call came to: the held thing, or the failure. */
  private static Object outcome(Future<?> call) throws InterruptedException {
    try {
      return call.get(STEP_BOUND.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (CancellationException e) {
      return e;
    } catch (TimeoutException e) {
      throw new AssertionError("not answered within " + STEP_BOUND);
    }
  }

  private static String outcomeText(Future<?> call) {
    try {
      Object outcome = outcome(call);
      return outcome instanceof Throwable t ? t.toString() : "granted";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    }
  }

  /** The reason of a failure, as the scenario files spell it. */
  private static String reasonOf(Object failure) {
    if (failure instanceof CancellationException) return "cancelled";
    if (failure instanceof TurnstileException e) return e.reason().name().toLowerCase(Locale.ROOT).replace('_', '-');
    throw new AssertionError("failed with " + failure + ", which is no TurnstileException", (Throwable) failure);
  }

  @SuppressWarnings("unchecked")
  private void check(String id, Started s, Map<String, Object> step) throws InterruptedException {
    Object outcome = outcome(s.call());
    Object expect = step.get("expect");
    if ("granted".equals(expect)) {
      if (outcome instanceof Throwable t) throw new AssertionError("\"" + id + "\" was not granted: " + t, t);
      held.put(id, s);
      if (!(outcome instanceof LockSet)) {
        BlockingQueue<ReleaseRequest> asked = new LinkedBlockingQueue<>();
        requests.put(id, asked);
        lockOn(outcome, null).onReleaseRequested(asked::add);
      }
      String ref = step.get("tokenAbove") instanceof String above ? above : (String) step.get("tokenEquals");
      if (ref != null) {
        Lock theirs = lockIn(ref, null);
        long mine = lockOn(outcome, theirs.name()).fencingToken();
        if (step.containsKey("tokenAbove") && mine <= theirs.fencingToken())
          throw new AssertionError("\"" + id + "\" token " + mine + " is not above \"" + ref + "\" token " + theirs.fencingToken());
        if (step.containsKey("tokenEquals") && mine != theirs.fencingToken())
          throw new AssertionError("\"" + id + "\" token " + mine + " is not \"" + ref + "\" token " + theirs.fencingToken());
      }
      if (step.get("holdCount") instanceof Long count && ((Lock) outcome).holdCount() != count)
        throw new AssertionError("\"" + id + "\" hold count " + ((Lock) outcome).holdCount() + ", want " + count);
      if (step.get("locks") instanceof Long count && ((LockSet) outcome).locks().size() != count)
        throw new AssertionError("\"" + id + "\" has " + ((LockSet) outcome).locks().size() + " locks, want " + count);
      return;
    }
    Map<String, Object> e = (Map<String, Object>) expect;
    String reason = (String) e.get("error");
    if (reason == null) throw new AssertionError("\"" + id + "\": a queued expectation is checked when the acquire starts");
    if (!(outcome instanceof Throwable failure)) throw new AssertionError("\"" + id + "\" was granted; expected " + reason);
    if (!reason.equals(reasonOf(failure))) throw new AssertionError("\"" + id + "\" failed " + failure + "; expected " + reason, failure);
    if (e.get("messageIncludes") instanceof String part && !String.valueOf(failure.getMessage()).contains(part))
      throw new AssertionError("\"" + id + "\" message \"" + failure.getMessage() + "\" does not include \"" + part + "\"");
    if (e.get("blockedBy") instanceof List<?> blockers) {
      List<String> got = new ArrayList<>();
      for (TurnstileException.Blocker b : ((TurnstileException) failure).blockedBy())
        got.add(b.clientName() + " " + b.name() + " " + b.fencingToken() + " " + b.owner());
      List<String> want = new ArrayList<>();
      for (Object o : blockers) {
        Map<String, Object> b = (Map<String, Object>) o;
        String name = (String) b.getOrDefault("name", "");
        String key = b.get("client") + " " + name;
        if (b.get("lock") instanceof String lockId) {
          Lock lock = lockIn(lockId, name.isEmpty() ? null : name);
          key += " " + lock.fencingToken() + " " + lock.owner();
        }
        want.add(key);
      }
      got.sort(null);
      want.sort(null);
      if (!got.equals(want)) throw new AssertionError("\"" + id + "\" blocked by " + got + ", want " + want);
    }
    if (e.get("cycle") instanceof List<?> cycle) {
      List<String> got = ((TurnstileException) failure).deadlockCycle().stream().map(TurnstileException.DeadlockStep::clientName).toList();
      if (!got.equals(cycle)) throw new AssertionError("\"" + id + "\" deadlock cycle " + got + ", want " + cycle);
    }
  }

  /** The lock of {@code held} on {@code name}: a set's lock of that name; a lock or leadership itself. */
  private static Lock lockOn(Object held, String name) {
    if (held instanceof LockSet set) return name == null ? set.locks().get(0) : set.lock(name);
    if (held instanceof Leadership leadership) return leadership.lock();
    return (Lock) held;
  }

  private Lock lockIn(String id, String name) throws InterruptedException {
    return lockOn(outcome(lookup(held, id, "hold").call()), name);
  }

  private Lock lock(String id) throws InterruptedException {
    Object h = outcome(lookup(held, id, "hold").call());
    if (h instanceof LockSet) throw new AssertionError("\"" + id + "\" is a set");
    return lockOn(h, null);
  }

  private Leadership leadership(String id) throws InterruptedException {
    if (outcome(lookup(held, id, "hold").call()) instanceof Leadership leadership) return leadership;
    throw new AssertionError("\"" + id + "\" is no leadership");
  }

  private void release(String id) throws InterruptedException {
    Object h = outcome(lookup(held, id, "hold").call());
    if (h instanceof LockSet set) set.release();
    else if (h instanceof Leadership leadership) leadership.resign();
    else ((Lock) h).release();
  }

  private void lost(String id, Map<String, Object> step) throws Exception {
    Lock lock = lock(id);
    LossReason why = lock.lost().get(STEP_BOUND.toMillis(), TimeUnit.MILLISECONDS);
    boolean answeredFirst = step.get("before") instanceof String before && lookup(started, before, "acquire").call().isDone();
    String reason = why.name().toLowerCase(Locale.ROOT).replace('_', '-');
    if (!reason.equals(step.get("reason"))) throw new AssertionError("\"" + id + "\" lost (" + reason + "), expected " + step.get("reason"));
    if (answeredFirst) throw new AssertionError("\"" + step.get("before") + "\" was answered before \"" + id + "\" was told it is lost");
  }

  private void describe(String name, Map<String, Object> step) throws InterruptedException {
    AtomicReference<DescribeResponse> seen = new AtomicReference<>();
    eventually(() -> {
      DescribeResponse d = fleet.describe(name);
      seen.set(d);
      return (!(step.get("holders") instanceof Long h) || d.getHoldersCount() == h)
          && (!(step.get("waiters") instanceof Long w) || d.getWaitersCount() == w)
          && (!(step.get("delay") instanceof Boolean delay) || d.hasDelayRemaining() == delay)
          && (!(step.get("priorities") instanceof List<?> want)
              || d.getWaitersList().stream().map(w -> (long) w.getPriority()).toList().equals(want));
    }, () -> "\"" + name + "\" to show " + step + " (holders " + (seen.get() == null ? "?" : seen.get().getHoldersCount())
        + ", waiters " + (seen.get() == null ? "?" : seen.get().getWaitersCount())
        + ", delay " + (seen.get() != null && seen.get().hasDelayRemaining()) + ")");
  }

  /** Transfers a lock or leadership to client {@code to}'s session (absent: the head of the queue). */
  private void transfer(String id, Map<String, Object> step) throws InterruptedException {
    Lock lock = lock(id);
    String to = step.get("to") instanceof String client ? lookup(clients, client, "client").sessionId() : "";
    String toOwner = step.get("toOwner") instanceof String owner ? owner : "";
    Object outcome;
    try {
      outcome = lock.transfer(to, toOwner);
    } catch (TurnstileException e) {
      outcome = e;
    }
    checkHandOver(id, outcome, step.get("expect"));
    if ("transferred".equals(step.get("expect")) && lock.isValid())
      throw new AssertionError("\"" + id + "\" is still valid after its transfer");
  }

  private void askRelease(String clientId, Map<String, Object> step) throws InterruptedException {
    TurnstileClient client = lookup(clients, clientId, "client");
    Object outcome;
    try {
      outcome = (long) client.requestRelease((String) step.get("name"), (String) step.getOrDefault("reason", ""));
    } catch (TurnstileException e) {
      outcome = e;
    }
    checkHandOver(clientId, outcome, step.get("expect"));
  }

  @SuppressWarnings("unchecked")
  private static void checkHandOver(String id, Object outcome, Object expect) {
    if (!(expect instanceof Map<?, ?>)) {
      if (outcome instanceof Throwable t) throw new AssertionError("\"" + id + "\" failed: " + t, t);
      if (expect instanceof Long count && !count.equals(outcome))
        throw new AssertionError("\"" + id + "\" answered " + outcome + ", want " + count);
      return;
    }
    Map<String, Object> e = (Map<String, Object>) expect;
    if (!(outcome instanceof TurnstileException failure)) throw new AssertionError("\"" + id + "\" answered " + outcome + "; expected " + e.get("error"));
    if (!e.get("error").equals(reasonOf(failure))) throw new AssertionError("\"" + id + "\" failed " + failure + "; expected " + e.get("error"), failure);
    if (e.get("messageIncludes") instanceof String part && !String.valueOf(failure.getMessage()).contains(part))
      throw new AssertionError("\"" + id + "\" message \"" + failure.getMessage() + "\" does not include \"" + part + "\"");
  }

  private void releaseRequested(String id, Map<String, Object> step) throws InterruptedException {
    ReleaseRequest got = lookup(requests, id, "hold").poll(STEP_BOUND.toMillis(), TimeUnit.MILLISECONDS);
    if (got == null) throw new AssertionError("\"" + id + "\" was not asked to let go within " + STEP_BOUND.toSeconds() + " s");
    String from = lookup(clients, (String) step.get("from"), "client").sessionId();
    if (!got.reason().equals(step.get("reason")) || !got.sessionId().equals(from))
      throw new AssertionError("\"" + id + "\" was asked " + got + "; want reason " + step.get("reason") + " from " + from);
  }

  /** Re-checks {@code done} every 20 ms until it holds; fails with {@code what} after STEP_BOUND. */
  private static void eventually(Supplier<Boolean> done, Supplier<String> what) throws InterruptedException {
    long end = System.nanoTime() + STEP_BOUND.toNanos();
    while (!done.get()) {
      if (System.nanoTime() - end > 0) throw new AssertionError("timed out after " + STEP_BOUND.toSeconds() + " s waiting for " + what.get());
      Thread.sleep(20);
    }
  }

  private static <T> T lookup(Map<String, T> map, String id, String what) {
    T found = map.get(id);
    if (found == null) throw new AssertionError("no " + what + " \"" + id + "\" in this scenario");
    return found;
  }

  /** Proxies first (no close waits on a frozen link), then observers and clients, then the scenario's coordinators. */
  @Override
  public void close() throws Exception {
    for (TcpProxy proxy : proxies.values()) proxy.close();
    for (AutoCloseable o : observing) o.close();
    for (TurnstileClient client : clients.values()) client.close();
    calls.shutdownNow();
    if (!calls.awaitTermination(10, TimeUnit.SECONDS)) throw new IllegalStateException("a campaign call did not end");
    for (CoordinatorProcess coordinator : coordinators.values()) coordinator.close();
  }
}
