package io.github.turnstilelocks.client.harness;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/**
 * What the suite needs on the machine: redis-server and node on PATH, and the coordinator built
 * (dist/, by `npm run build`). Missing, the tests are skipped with a message saying what to
 * install — unless CI=true or TURNSTILE_REQUIRE_REDIS=1, where a missing part fails them.
 */
public final class Requirements {
  private Requirements() {}

  /** The repository root (system property turnstile.repo, set by the pom). */
  public static Path repo() {
    return Path.of(System.getProperty("turnstile.repo", "../..")).toAbsolutePath().normalize();
  }

  /** Skips (or, when required, fails) the calling test class when a part is missing. */
  public static void check() {
    String missing = null;
    if (!onPath("redis-server")) missing = "redis-server not found on PATH (Debian: apt-get install redis-server)";
    else if (!onPath("node")) missing = "node not found on PATH (Node 20 runs the coordinator)";
    else if (!Files.exists(repo().resolve("dist/bin/turnstile-cli.js"))) {
      missing = "the coordinator is not built: run `npm ci` (or `npm run build`) in " + repo();
    }
    if (missing == null) return;
    boolean required = "true".equals(System.getenv("CI")) || "1".equals(System.getenv("TURNSTILE_REQUIRE_REDIS"));
    if (required) throw new IllegalStateException(missing + " (required: CI=true or TURNSTILE_REQUIRE_REDIS=1)");
    Assumptions.abort("skipped: " + missing);
  }

  /** Whether openssl is on PATH (the mTLS test makes its certificates with it). */
  public static boolean hasOpenssl() {
    return onPath("openssl");
  }

  private static boolean onPath(String command) {
    String path = System.getenv("PATH");
    if (path == null) return false;
    for (String dir : path.split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, command))) return true;
    }
    return false;
  }
}
