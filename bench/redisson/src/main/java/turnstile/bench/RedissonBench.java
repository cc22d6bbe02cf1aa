package turnstile.bench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The bench's hand-off and spread workloads with Redisson's RLock and RFairLock, for the
 * comparison in BENCHMARKS.md. Usage: {@code java -cp ... turnstile.bench.RedissonBench REDIS_URL
 * WARMUP_MS MEASURE_MS HANDOFF_SIZES SPREAD_SIZES [DISCIPLINES]} (sizes comma-separated; disciplines
 * {@code at-once,after-turn}, the default {@code after-turn}). One shared Redisson client, one thread
 * per contender or worker. Every configuration first runs unmeasured for WARMUP_MS (the JVM warms
 * up), then for MEASURE_MS; each prints one JSON line on stdout.
 */
public final class RedissonBench {
  private RedissonBench() {}

  public static void main(String[] args) throws Exception {
    String url = args[0];
    long warmupMs = Long.parseLong(args[1]);
    long measureMs = Long.parseLong(args[2]);
    String[] disciplines = (args.length > 5 ? args[5] : "after-turn").split(",");
    Config config = new Config();
    config.useSingleServer().setAddress(url).setConnectionMinimumIdleSize(8);
    RedissonClient redisson = Redisson.create(config);
    try {
      for (String kind : new String[] {"rlock", "fair"}) {
        for (String n : args[3].split(",")) {
          int contenders = Integer.parseInt(n.trim());
          for (String d : disciplines) {
            boolean atOnce = d.trim().equals("at-once");
            if (!atOnce && !d.trim().equals("after-turn"))
              throw new IllegalArgumentException("DISCIPLINES: at-once or after-turn, got " + d);
            handOff(redisson, kind, contenders, atOnce, warmupMs); // warm-up, not printed
            System.out.println(handOff(redisson, kind, contenders, atOnce, measureMs));
          }
        }
        for (String n : args[4].split(",")) {
          int workers = Integer.parseInt(n.trim());
          spread(redisson, kind, workers, warmupMs);
          System.out.println(spread(redisson, kind, workers, measureMs));
        }
      }
    } finally {
      redisson.shutdown();
    }
  }

  static RLock lockOf(RedissonClient redisson, String kind, String name) {
    return kind.equals("fair") ? redisson.getFairLock(name) : redisson.getLock(name);
  }

  static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /**
   * N threads on one lock, the bench's rules: every release hands the lock to a waiter. The holder
   * unlocks as soon as the previous holder has asked again ({@code atOnce}) or 50 µs later, which
   * lets that request reach Redis first (the bench's after-turn discipline).
   */
  static String handOff(RedissonClient redisson, String kind, int n, boolean atOnce, long runMs)
      throws Exception {
    String name = "bench-redisson-handoff-" + UUID.randomUUID();
    HandOffBoard board = new HandOffBoard(n);
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    AtomicLong lastReleaseAt = new AtomicLong(Long.MIN_VALUE);
    List<Double> gaps = new ArrayList<>();
    int[] counts = new int[n];
    long[] window = {0, 0};
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      final int me = i;
      Thread t = new Thread(() -> {
        RLock lock = lockOf(redisson, kind, name);
        int myEntry = -1;
        while (!board.stopping()) {
          board.untilEnteredAfter(myEntry);
          if (board.stopping()) break;
          board.issued(me);
          lock.lock();
          long now = System.nanoTime();
          if (inside.incrementAndGet() > 1) violations.incrementAndGet();
          int[] entered = board.enter(me);
          myEntry = entered[0];
          long last = lastReleaseAt.get();
          synchronized (gaps) {
            if (now >= window[0] && window[1] == 0 && last != Long.MIN_VALUE && last >= window[0]) {
              gaps.add((now - last) / 1e6);
              counts[me]++;
            }
          }
          int previous = entered[1];
          if (previous >= 0 && previous != me && !board.stopping()) {
            board.untilIssuedSince(previous, myEntry);
            if (!atOnce) LockSupport.parkNanos(50_000); // let the previous holder's request reach Redis
          }
          inside.decrementAndGet();
          lastReleaseAt.set(System.nanoTime());
          lock.unlock();
        }
      });
      threads.add(t);
    }
    synchronized (gaps) {
      window[0] = Long.MAX_VALUE;
    }
    for (Thread t : threads) t.start();
    long cpu0 = cpuNanos();
    synchronized (gaps) {
      window[0] = System.nanoTime();
    }
    Thread.sleep(runMs);
    synchronized (gaps) {
      window[1] = System.nanoTime();
    }
    long cpu = cpuNanos() - cpu0;
    board.stop();
    for (Thread t : threads) t.join(30_000);
    double seconds = (window[1] - window[0]) / 1e9;
    String discipline = atOnce ? "at-once" : "after-turn";
    return json("handoff", discipline, kind, n, gaps.size(), seconds, cpu, gaps, counts, violations.get());
  }

  /** W threads, each looping lock → unlock on a lock of its own. */
  static String spread(RedissonClient redisson, String kind, int w, long runMs) throws Exception {
    String prefix = "bench-redisson-spread-" + UUID.randomUUID();
    AtomicInteger cycles = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    List<Double> acquires = new ArrayList<>();
    AtomicBoolean measuring = new AtomicBoolean();
    AtomicBoolean stopping = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < w; i++) {
      RLock lock = lockOf(redisson, kind, prefix + "-" + i);
      AtomicInteger inside = new AtomicInteger();
      Thread t = new Thread(() -> {
        while (!stopping.get()) {
          long asked = System.nanoTime();
          lock.lock();
          long now = System.nanoTime();
          if (inside.incrementAndGet() > 1) violations.incrementAndGet();
          if (measuring.get()) {
            cycles.incrementAndGet();
            synchronized (acquires) {
              acquires.add((now - asked) / 1e6);
            }
          }
          inside.decrementAndGet();
          lock.unlock();
        }
      });
      threads.add(t);
      t.start();
    }
    long cpu0 = cpuNanos();
    long start = System.nanoTime();
    measuring.set(true);
    Thread.sleep(runMs);
    measuring.set(false);
    double seconds = (System.nanoTime() - start) / 1e9;
    long cpu = cpuNanos() - cpu0;
    stopping.set(true);
    for (Thread t : threads) t.join(30_000);
    return json("spread", null, kind, w, cycles.get(), seconds, cpu, acquires, new int[0], violations.get());
  }

  /** One result line; {@code discipline} only on hand-off lines (null: left out). */
  static String json(String workload, String discipline, String kind, int n, int ops, double seconds, long cpuNanos,
      List<Double> samples, int[] counts, int violations) {
    StringBuilder s = new StringBuilder();
    s.append(String.format(Locale.ROOT,
        "{\"workload\":\"%s\",%s\"lock\":\"%s\",\"n\":%d,\"ops\":%d,\"seconds\":%.6f,\"cpuSeconds\":%.6f,\"violations\":%d,\"counts\":[",
        workload, discipline == null ? "" : "\"discipline\":\"" + discipline + "\",", kind, n, ops, seconds, cpuNanos / 1e9, violations));
    for (int i = 0; i < counts.length; i++) s.append(i == 0 ? "" : ",").append(counts[i]);
    s.append("],\"samplesMs\":[");
    synchronized (samples) {
      for (int i = 0; i < samples.size(); i++)
        s.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT, "%.4f", samples.get(i)));
    }
    return s.append("]}").toString();
  }
}
