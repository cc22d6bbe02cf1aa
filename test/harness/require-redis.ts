import { redisServerAvailable } from "./redis-server.js";

const INSTALL = "install it (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis)";

// Mocha global setup: with TURNSTILE_REQUIRE_REDIS=1 a missing redis-server stops the run at once;
// otherwise one line says that the Redis suites are skipped (.mocharc.cjs leaves them out, and
// test/harness/redis-suites-skipped.ts lists each).
export function mochaGlobalSetup(): void {
  if (redisServerAvailable()) return;
  if (process.env.TURNSTILE_REQUIRE_REDIS === "1") {
    console.error(`redis-server not found on PATH and TURNSTILE_REQUIRE_REDIS=1: ${INSTALL}`);
    process.exit(1);
  }
  console.error(`redis-server not found on PATH: running the suites that need no Redis only; ${INSTALL}`);
}
