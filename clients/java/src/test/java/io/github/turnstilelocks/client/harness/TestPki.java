package io.github.turnstilelocks.client.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway certificate authority in a directory, made with openssl (P-256 keys, PKCS#8 as
 * grpc-java wants them): a server certificate for 127.0.0.1 and client certificates by CN.
 */
public final class TestPki {
  /** A certificate and its key, as PEM files. */
  public record Pair(Path cert, Path key) {}

  private final Path dir;
  private final Path ca;
  private final Path caKey;

  public TestPki(Path dir) throws Exception {
    this.dir = dir;
    this.ca = dir.resolve("ca.crt");
    this.caKey = dir.resolve("ca.key");
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
        caKey.toString(), "-out", ca.toString(), "-days", "2", "-subj", "/CN=turnstile-java-test-ca");
  }

  /** The CA certificate (PEM). */
  public Path ca() {
    return ca;
  }

  /** A server certificate for 127.0.0.1 and localhost. */
  public Pair server() throws Exception {
    return leaf("server", "127.0.0.1", "subjectAltName=IP:127.0.0.1,DNS:localhost");
  }

  /** A client certificate whose CN (the identity the coordinator sees) is {@code cn}. */
  public Pair client(String cn) throws Exception {
    return leaf(cn, cn, "basicConstraints=CA:FALSE");
  }

  private Pair leaf(String file, String cn, String extension) throws Exception {
    Path key = dir.resolve(file + ".key");
    Path csr = dir.resolve(file + ".csr");
    Path cert = dir.resolve(file + ".crt");
    Path ext = dir.resolve(file + ".ext");
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key.toString(),
        "-out", csr.toString(), "-subj", "/CN=" + cn);
    Files.writeString(ext, extension + "\n");
    openssl("x509", "-req", "-in", csr.toString(), "-CA", ca.toString(), "-CAkey", caKey.toString(), "-CAcreateserial",
        "-out", cert.toString(), "-days", "1", "-extfile", ext.toString());
    return new Pair(cert, key);
  }

  private static void openssl(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) throw new IOException(command + " failed:\n" + output);
  }
}
