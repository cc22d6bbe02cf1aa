package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jose.jwk.JWKSet;
import io.github.turnstilelocks.client.fencing.FencingClaims;
import io.github.turnstilelocks.client.fencing.FencingProofException;
import io.github.turnstilelocks.client.fencing.FencingProofException.Refusal;
import io.github.turnstilelocks.client.fencing.FencingProofs;
import io.github.turnstilelocks.client.fencing.JwksFetcher;
import io.github.turnstilelocks.client.fencing.KeySource;
import io.github.turnstilelocks.client.fencing.RedisFenceGuard;
import io.github.turnstilelocks.client.harness.CoordinatorProcess;
import io.github.turnstilelocks.client.harness.FencedWriterChild;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * Fencing proofs through the Redis guard (docs/fencing.md): a holder SIGSTOPped past its lease is
 * refused after the next holder wrote; a forged fence of 2^63 is refused and the key stays usable;
 * another lock's proof is refused; a proof of the retired key is accepted while it is published.
 */
@ExtendWith(FleetExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FencingTest {
  private CoordinatorProcess main;
  private CoordinatorProcess retired;
  private String jwksUrl;
  private JwksFetcher keys;
  private Jedis redis;
  private String redisUrl;

  @BeforeAll
  void start(Fleet fleet, @TempDir Path dir) throws Exception {
    redisUrl = fleet.redisUrl();
    Path[] files = new Path[2];
    for (int i = 0; i < 2; i++) {
      PrivateKey key = KeyPairGenerator.getInstance("Ed25519").generateKeyPair().getPrivate();
      files[i] = dir.resolve("fencing-" + (i + 1) + ".pem");
      String pem = "-----BEGIN PRIVATE KEY-----\n" + Base64.getMimeEncoder().encodeToString(key.getEncoded()) + "\n-----END PRIVATE KEY-----\n";
      Files.writeString(files[i], pem);
    }
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    main = CoordinatorProcess.start(redisUrl, "--fencing-key", files[1].toString(), "--fencing-key", files[0].toString(),
        "--http", "127.0.0.1:" + port);
    retired = CoordinatorProcess.start(redisUrl, "--fencing-key", files[0].toString());
    jwksUrl = "http://127.0.0.1:" + port + "/.well-known/jwks.json";
    keys = new JwksFetcher(jwksUrl);
    redis = new Jedis(URI.create(redisUrl));
  }

  @AfterAll
  void stop() throws Exception {
    if (redis != null) redis.close();
    if (main != null) main.close();
    if (retired != null) retired.close();
  }

  private TurnstileClient client(CoordinatorProcess on) {
    return TurnstileClient.builder(on.address()).clientName("fencing-test").build();
  }

  private RedisFenceGuard guard() {
    return new RedisFenceGuard(redis, keys);
  }

  @Test
  void aHolderPausedPastItsLeaseIsRefusedAfterTheNextHolderWrote() throws Exception {
    String name = "java/fencing/paused";
    String key = "guarded:java:paused";
    Process a = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), FencedWriterChild.class.getName(),
        main.address(), name, "1500", jwksUrl, redisUrl).redirectErrorStream(true).start();
    try (TurnstileClient b = client(main);
        BufferedReader out = new BufferedReader(new InputStreamReader(a.getInputStream(), StandardCharsets.UTF_8));
        Writer in = new OutputStreamWriter(a.getOutputStream(), StandardCharsets.UTF_8)) {
      String acquired = nextLine(out, "acquired ");
      long tokenA = Long.parseLong(acquired.substring("acquired ".length()));
      assertEquals("answer 1 written", ask(in, out, key + " from-A-while-holding"));
      signal(a, "STOP");
      Lock lockB = b.acquire(name);
      assertTrue(lockB.fencingToken() > tokenA, "B's token is above A's");
      guard().write(lockB.fencingProof(), key, "from-B", name);
      signal(a, "CONT");
      assertEquals("answer 2 stale", ask(in, out, key + " from-A-after-pause"), "A's late write is refused");
      assertEquals("from-B", redis.get(key));
      assertEquals(Long.toString(lockB.fencingToken()), redis.get(RedisFenceGuard.fenceKey(key)));
      lockB.release();
    } finally {
      signal(a, "CONT");
      a.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aForgedFenceOf2To63IsRefusedAndTheKeyStaysUsable() throws Exception {
    String name = "java/fencing/forged";
    String key = "guarded:java:forged";
    try (TurnstileClient c = client(main)) {
      Lock lock = c.acquire(name);
      guard().write(lock.fencingProof(), key, "real", name);
      String kid = keys.keys(false).getKeys().get(0).getKeyID();
      String forged = "9223372036854775808";
      FencingProofException e = assertThrows(FencingProofException.class, () -> guard().write(forgedProof(name, forged, kid), key, "forged", name));
      assertEquals(Refusal.BAD_SIGNATURE, e.refusal());
      e = assertThrows(FencingProofException.class, () -> guard().write(forged, key, "forged", name));
      assertEquals(Refusal.MALFORMED, e.refusal());
      assertEquals("real", redis.get(key));
      lock.release();
      Lock next = c.acquire(name);
      guard().write(next.fencingProof(), key, "next", name);
      assertEquals("next", redis.get(key), "the next real holder still writes");
      next.release();
    }
  }

  @Test
  void aValidProofForAnotherLockIsRefused() throws Exception {
    try (TurnstileClient c = client(main)) {
      Lock other = c.acquire("java/fencing/other");
      FencingProofException e = assertThrows(FencingProofException.class,
          () -> guard().write(other.fencingProof(), "guarded:java:named", "x", "java/fencing/named"));
      assertEquals(Refusal.WRONG_LOCK, e.refusal());
      assertFalse(redis.exists("guarded:java:named"));
      other.release();
    }
  }

  @Test
  void aProofOfTheRetiredKeyIsAcceptedWhileItIsPublished() throws Exception {
    String name = "java/fencing/rotated";
    try (TurnstileClient c = client(retired)) {
      Lock old = c.acquire(name);
      FencingClaims claims = guard().write(old.fencingProof(), "guarded:java:rotated", "old-key", name);
      JWKSet published = keys.keys(false);
      assertEquals(published.getKeys().get(1).getKeyID(), claims.keyId(), "signed by the retired key");
      assertNotEquals(published.getKeys().get(0).getKeyID(), claims.keyId());
      assertEquals(old.fencingToken(), claims.fence());
      KeySource current = KeySource.of(new JWKSet(List.of(published.getKeys().get(0))));
      FencingProofException e = assertThrows(FencingProofException.class, () -> FencingProofs.verify(old.fencingProof(), current, name, null));
      assertEquals(Refusal.UNKNOWN_KID, e.refusal(), "refused once the key is no longer published");
      old.release();
    }
  }

  @Test
  void aLockSetGivesEachLocksProof() throws Exception {
    try (TurnstileClient c = client(main)) {
      LockSet set = c.acquireAll("java/fencing/s1", "java/fencing/s2");
      for (String n : List.of("java/fencing/s1", "java/fencing/s2")) {
        Lock l = set.lock(n);
        assertEquals(l.fencingToken(), FencingProofs.verify(l.fencingProof(), keys, n, null).fence());
      }
      set.release();
    }
  }

  @Test
  void theKeyFetcherFetchesAgainOnAnUnknownKid() throws Exception {
    // The first answer predates the rotation (the retired key only); the next is the coordinator's.
    JWKSet published = keys.keys(false);
    String stale = new JWKSet(List.of(published.getKeys().get(1))).toString();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    int[] served = {0};
    String current = published.toString();
    server.createContext("/", exchange -> {
      byte[] body = (served[0]++ == 0 ? stale : current).getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
    try (TurnstileClient c = client(main)) {
      JwksFetcher fetcher = new JwksFetcher("http://127.0.0.1:" + server.getAddress().getPort() + "/jwks.json", Duration.ofMinutes(5), Duration.ZERO);
      Lock lock = c.acquire("java/fencing/fetcher");
      assertEquals(lock.fencingToken(), FencingProofs.verify(lock.fencingProof(), fetcher, "java/fencing/fetcher", null).fence());
      FencingProofs.verify(lock.fencingProof(), fetcher, null, null);
      assertEquals(2, fetcher.fetches(), "one stale fetch, one on the unknown kid, then the cache");
      lock.release();
    } finally {
      server.stop(0);
    }
  }

  @Test
  void checkFenceAnswersCurrentSupersededAndUnknown() throws Exception {
    String name = "java/fencing/check";
    try (TurnstileClient c = client(main)) {
      Lock a = c.acquire(name);
      assertEquals(new FenceCheck(FenceCheck.Status.CURRENT, 0), c.checkFence(name, a.fencingToken()));
      a.release();
      Lock b = c.acquire(name);
      assertEquals(new FenceCheck(FenceCheck.Status.SUPERSEDED, b.fencingToken()), c.checkFence(name, a.fencingToken()));
      b.release();
      assertEquals(FenceCheck.Status.UNKNOWN, c.checkFence(name, b.fencingToken()).status());
    }
  }

  private static String forgedProof(String lock, String fence, String kid) throws Exception {
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    String header = b64.encodeToString(("{\"alg\":\"EdDSA\",\"kid\":\"" + kid + "\",\"typ\":\"JWT\"}").getBytes(StandardCharsets.UTF_8));
    String claims = b64.encodeToString(("{\"iss\":\"turnstile\",\"iat\":" + System.currentTimeMillis() / 1000 + ",\"lock\":\"" + lock
        + "\",\"fence\":\"" + fence + "\",\"caller\":\"\",\"client\":\"mallory\",\"session\":\"s\",\"owner\":\"o\"}").getBytes(StandardCharsets.UTF_8));
    Signature signer = Signature.getInstance("Ed25519");
    signer.initSign(KeyPairGenerator.getInstance("Ed25519").generateKeyPair().getPrivate());
    signer.update((header + "." + claims).getBytes(StandardCharsets.US_ASCII));
    return header + "." + claims + "." + b64.encodeToString(signer.sign());
  }

  private static void signal(Process p, String signal) throws Exception {
    if (p.isAlive()) new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor(10, TimeUnit.SECONDS);
  }

  private static String ask(Writer in, BufferedReader out, String line) throws Exception {
    in.write(line + "\n");
    in.flush();
    return nextLine(out, "answer ");
  }

  /** The child's next line starting with {@code prefix}, within 60 s. */
  private static String nextLine(BufferedReader out, String prefix) throws Exception {
    CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
      try {
        for (String l = out.readLine(); l != null; l = out.readLine()) if (l.startsWith(prefix)) return l;
        return "(the child exited)";
      } catch (java.io.IOException e) {
        return "(" + e.getMessage() + ")";
      }
    });
    return line.get(60, TimeUnit.SECONDS);
  }
}
