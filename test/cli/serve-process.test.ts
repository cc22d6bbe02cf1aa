import { expect } from "chai";
import { runTurnstile } from "../harness/run-turnstile.js";

describe("turnstile serve (process)", () => {
  it("exits 2 with one line per bad setting on stderr, one JSON fatal line in the log, and starts nothing", async () => {
    const run = await runTurnstile(["serve", "--listen", "nowhere", "--log-level", "loud"], {
      env: { TURNSTILE_MAX_WAIT: "soon" },
    });
    expect(run.code).to.equal(2);
    expect(run.stderr.trim().split("\n")).to.deep.equal([
      'turnstile serve: listen: "nowhere" from flag --listen is not HOST:PORT (e.g. 127.0.0.1:7420; port 0..65535)',
      'turnstile serve: log-level: "loud" from flag --log-level is not a log level (trace|debug|info|warn|error|fatal|silent)',
      'turnstile serve: max-wait: "soon" from env TURNSTILE_MAX_WAIT is not a duration (a number with a unit ms|s|m|h|d, e.g. 15s)',
    ]);
    const log = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(log).to.have.length(1);
    expect(log[0]).to.include({ level: 60, msg: "cannot start: invalid settings", exitCode: 2 });
    expect(log[0].errors).to.have.length(3);
  });

  it("exits 2 with one line each for durations above the longest timer and a negative count given as its own argument", async () => {
    const run = await runTurnstile(
      ["serve", "--max-wait", "30d", "--shutdown-grace", "100000d", "--max-name-bytes", "-5"],
      { env: { TURNSTILE_REDIS_COMMAND_TIMEOUT: "30d" } },
    );
    expect(run.code).to.equal(2);
    expect(run.stderr.trim().split("\n")).to.deep.equal([
      'turnstile serve: shutdown-grace: "100000d" from flag --shutdown-grace exceeds the maximum of 2147483647ms (about 24.8d), the longest timer',
      'turnstile serve: redis-command-timeout: "30d" from env TURNSTILE_REDIS_COMMAND_TIMEOUT exceeds the maximum of 2147483647ms (about 24.8d), the longest timer',
      'turnstile serve: max-wait: "30d" from flag --max-wait exceeds the maximum of 2147483647ms (about 24.8d), the longest timer',
      'turnstile serve: max-name-bytes: "-5" from flag --max-name-bytes is not a whole number of at least 1',
    ]);
  });

  it("documents every setting with its env var and default in --help", async () => {
    const run = await runTurnstile(["serve", "--help"]);
    expect(run.code).to.equal(0);
    const { SETTINGS } = await import("../../server/config/settings.js");
    for (const s of SETTINGS) {
      expect(run.stdout).to.include(`--${s.key}`);
      expect(run.stdout).to.include(`(env ${s.env}${s.default === undefined ? ")" : `, default ${s.default})`}`);
    }
  });
});
