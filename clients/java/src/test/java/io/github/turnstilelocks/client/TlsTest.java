package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.github.turnstilelocks.client.harness.CoordinatorProcess;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import io.github.turnstilelocks.client.harness.Requirements;
import io.github.turnstilelocks.client.harness.TestPki;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** mTLS and bearer tokens against a coordinator serving TLS with real openssl certificates. */
@ExtendWith(FleetExtension.class)
class TlsTest {
  private static final String TOKEN = "java-test-token-8d1f2c";

  @Test
  void mutualTlsNamesTheCallerByItsCertificateAndATokenByItsName(Fleet fleet, @TempDir Path dir) throws Exception {
    boolean required = "true".equals(System.getenv("CI")) || "1".equals(System.getenv("TURNSTILE_REQUIRE_REDIS"));
    if (!required) Assumptions.assumeTrue(Requirements.hasOpenssl(), "skipped: openssl not found on PATH (it makes the test certificates)");
    TestPki pki = new TestPki(dir);
    TestPki.Pair server = pki.server();
    TestPki.Pair javaCert = pki.client("java-mtls");
    String hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(TOKEN.getBytes(StandardCharsets.UTF_8)));
    Path tokens = Files.writeString(dir.resolve("tokens"), "java-token " + hash + "\n");
    try (CoordinatorProcess secure = CoordinatorProcess.start(fleet.redisUrl(), "--tls-cert", server.cert().toString(),
        "--tls-key", server.key().toString(), "--tls-client-ca", pki.ca().toString(), "--token-file", tokens.toString())) {
      try (TurnstileClient client = TurnstileClient.builder(secure.address()).clientName("mtls")
          .trustCertificates(pki.ca()).clientCertificate(javaCert.cert(), javaCert.key()).build()) {
        try (Lock lock = client.acquire("java/mtls")) {
          assertTrue(lock.isValid());
          assertEquals("java-mtls", fleet.describe("java/mtls").getHolders(0).getIdentity(), "the certificate names the caller");
        }
      }
      try (TurnstileClient client = TurnstileClient.builder(secure.address()).clientName("token")
          .trustCertificates(pki.ca()).clientCertificate(javaCert.cert(), javaCert.key()).bearerToken(TOKEN).build()) {
        try (Lock lock = client.acquire("java/token")) {
          assertEquals("java-token", fleet.describe("java/token").getHolders(0).getIdentity(), "the token names the caller");
        }
      }
      try (TurnstileClient noCert = TurnstileClient.builder(secure.address()).clientName("no-cert").trustCertificates(pki.ca()).build()) {
        TurnstileException refused = assertThrows(TurnstileException.class, () -> noCert.acquire("java/mtls"));
        assertEquals(Reason.CONNECTION, refused.reason(), refused.getMessage());
      }
      try (TurnstileClient plain = TurnstileClient.builder(secure.address()).clientName("plain").build()) {
        TurnstileException refused = assertThrows(TurnstileException.class, () -> plain.acquire("java/mtls"));
        assertEquals(Reason.CONNECTION, refused.reason(), refused.getMessage());
        assertFalse(refused.getMessage().contains(TOKEN));
      }
    }
  }
}
