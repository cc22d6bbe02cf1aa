package turnstile.example;

import io.github.turnstilelocks.client.ClientEvent;
import io.github.turnstilelocks.client.TurnstileClient;
import io.github.turnstilelocks.client.TurnstileClientBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * One worker per thread on the Turnstile Java client (clients/java): each opens its own session,
 * then runs rounds of acquire → hold → release; with --log every worker appends
 * "enter/exit {worker} {token}" lines to one shared file, which is how the interop test
 * (test/interop/) checks exclusion. Flags take --name=value; each falls back to an env var.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> flags = parseFlags(args);
    String addr = flag(flags, "addr", "TURNSTILE_ADDR", "127.0.0.1:7420");
    String lockName = flag(flags, "lock", "TURNSTILE_LOCK", "examples/demo");
    int rounds = Integer.parseInt(flag(flags, "rounds", "TURNSTILE_ROUNDS", "1"));
    int workers = Integer.parseInt(flag(flags, "workers", "TURNSTILE_WORKERS", "1"));
    String prefix = flag(flags, "name", "TURNSTILE_WORKER_NAME", "java");
    String logPath = flag(flags, "log", "TURNSTILE_LOG", "");
    Duration hold = parseDuration(flag(flags, "hold", "TURNSTILE_HOLD", "200ms"));
    Duration wait = parseDuration(flag(flags, "wait", "TURNSTILE_WAIT", "30s"));
    Duration ttl = parseDuration(flag(flags, "ttl", "TURNSTILE_TTL", "15s"));

    ExecutorService pool = Executors.newFixedThreadPool(workers);
    boolean failed = false;
    try (SharedLog log = logPath.isEmpty() ? null : new SharedLog(Path.of(logPath))) {
      List<Future<Void>> results = new ArrayList<>();
      for (int i = 1; i <= workers; i++) {
        String name = prefix + "-" + i;
        TurnstileClientBuilder client = TurnstileClient.builder(addr).clientName(name).ttl(ttl).onEvent(Main::logEvent);
        secure(client, flags);
        results.add(pool.submit(new Worker(client, new Worker.Config(name, lockName, rounds, hold, wait, log))));
      }
      for (Future<Void> result : results) {
        try {
          result.get();
        } catch (ExecutionException e) {
          log("worker failed: " + e.getCause());
          failed = true;
        }
      }
    } finally {
      pool.shutdownNow();
    }
    if (failed) System.exit(1);
    log(workers + " worker(s) finished " + rounds + " round(s) each");
  }

  // --tls-ca, --tls-cert/--tls-key (mTLS), --token: named as the turnstile CLI names them.
  private static void secure(TurnstileClientBuilder client, Map<String, String> flags) {
    String ca = flag(flags, "tls-ca", "TURNSTILE_TLS_CA", "");
    String cert = flag(flags, "tls-cert", "TURNSTILE_TLS_CERT", "");
    String key = flag(flags, "tls-key", "TURNSTILE_TLS_KEY", "");
    String token = flag(flags, "token", "TURNSTILE_TOKEN", "");
    if (cert.isEmpty() != key.isEmpty()) throw new IllegalArgumentException("tls-cert and tls-key go together: set both or neither");
    if (!ca.isEmpty()) client.trustCertificates(Path.of(ca));
    if (!cert.isEmpty()) client.clientCertificate(Path.of(cert), Path.of(key));
    if (!token.isEmpty()) client.bearerToken(token);
  }

  // The interop test counts the "resumed with N lock(s)" lines: one per session that survived a drain.
  private static void logEvent(ClientEvent event) {
    switch (event.kind()) {
      case RECONNECTING -> log("session " + event.sessionId() + ": stream ended (" + event.detail() + "); resuming");
      case RESUMED -> log("session " + event.sessionId() + ": resumed with " + event.locks() + " lock(s)");
      case EXPIRED -> log("session " + event.sessionId() + ": could not be resumed (" + event.detail() + ")");
      default -> {}
    }
  }

  static void log(String message) {
    System.err.println(LocalTime.now() + " " + message);
  }

  private static Map<String, String> parseFlags(String[] args) {
    Map<String, String> flags = new HashMap<>();
    for (String arg : args) {
      String[] parts = arg.replaceFirst("^--?", "").split("=", 2);
      if (parts.length != 2) throw new IllegalArgumentException("flags take the form --name=value, got " + arg);
      flags.put(parts[0], parts[1]);
    }
    return flags;
  }

  private static String flag(Map<String, String> flags, String name, String env, String fallback) {
    String value = flags.getOrDefault(name, System.getenv(env));
    return value == null ? fallback : value;
  }

  /** Parses "250ms", "2s" or "1m". */
  static Duration parseDuration(String text) {
    if (text.endsWith("ms")) return Duration.ofMillis(Long.parseLong(text.substring(0, text.length() - 2)));
    if (text.endsWith("s")) return Duration.ofSeconds(Long.parseLong(text.substring(0, text.length() - 1)));
    if (text.endsWith("m")) return Duration.ofMinutes(Long.parseLong(text.substring(0, text.length() - 1)));
    throw new IllegalArgumentException("durations take the form 250ms, 2s or 1m, got " + text);
  }
}
