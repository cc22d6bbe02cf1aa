package io.github.turnstilelocks.client.harness;

import io.github.turnstilelocks.client.Lock;
import io.github.turnstilelocks.client.TurnstileClient;
import io.github.turnstilelocks.client.fencing.FencingProofException;
import io.github.turnstilelocks.client.fencing.JwksFetcher;
import io.github.turnstilelocks.client.fencing.RedisFenceGuard;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import redis.clients.jedis.Jedis;

/**
 * A lock holder in its own JVM that writes through the Redis guard, for FencingTest to pause
 * (SIGSTOP) past its lease. Args: ADDRESS NAME TTL_MS JWKS_URL REDIS_URL. Prints "acquired TOKEN",
 * then per stdin line "KEY VALUE" one line "answer N written" or "answer N REFUSAL" — it writes
 * whether or not it still holds the lock: it plays a holder that does not know it was paused.
 */
public final class FencedWriterChild {
  private FencedWriterChild() {}

  public static void main(String[] args) throws Exception {
    String name = args[1];
    try (TurnstileClient client = TurnstileClient.builder(args[0]).ttl(Duration.ofMillis(Long.parseLong(args[2]))).build();
        Jedis redis = new Jedis(URI.create(args[4]))) {
      Lock lock = client.acquire(name);
      RedisFenceGuard guard = new RedisFenceGuard(redis, new JwksFetcher(args[3]));
      System.out.println("acquired " + lock.fencingToken());
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      int n = 0;
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        n++;
        String[] fields = line.split(" ");
        try {
          guard.write(lock.fencingProof(), fields[0], fields[1], name);
          System.out.println("answer " + n + " written");
        } catch (FencingProofException e) {
          System.out.println("answer " + n + " " + e.refusal().label());
        }
      }
    }
    System.exit(0);
  }
}
