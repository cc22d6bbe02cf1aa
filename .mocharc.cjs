// Mocha settings. Without redis-server on PATH the pure suites run (every suite that does not import a
// harness module starting redis-server: test/harness/suite-groups.cjs works the groups out from the
// imports, so none is kept by hand) and one pending test per Redis suite says why it did not run;
// with TURNSTILE_REQUIRE_REDIS=1 (CI) a missing redis-server fails the run instead.
const { spawnSync } = require("node:child_process");
const { IGNORED, specWithoutRedis } = require("./test/harness/suite-groups.cjs");

const hasRedis = spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
// `npx mocha test/x.test.ts` runs just the files named: mocha would add them to `spec`, not replace it.
const named = process.argv.slice(2).some((arg) => arg.endsWith(".test.ts"));

module.exports = {
  "node-option": ["import=tsx"],
  spec: named ? [] : hasRedis ? ["test/**/*.test.ts"] : specWithoutRedis(),
  // Needs Go and Java: run by `npm run test:interop` only. Fault tests (minutes of kill -9 and
  // failovers): `npm run test:failover` only.
  ignore: IGNORED,
  extension: ["ts"],
  timeout: 20000,
  "forbid-only": true,
  // No `exit: true`: the run ends when the tests have closed everything they opened. A handle left
  // open fails the run after 10 s, naming it (test/harness/exit-watchdog.ts).
  reporter: "spec",
  require: ["test/harness/require-redis.ts", "test/harness/exit-watchdog.ts"],
};
