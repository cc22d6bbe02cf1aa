import { redisServerAvailable } from "./redis-server.js";

// Mocha global setup: the suites need a real redis-server; stop at once, with one line, without it.
export function mochaGlobalSetup(): void {
  if (!redisServerAvailable()) {
    console.error(
      "redis-server not found on PATH: install it (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis)",
    );
    process.exit(1);
  }
}
