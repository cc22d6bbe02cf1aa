import { expect } from "chai";
import { ANSWER_GRACE_MS } from "../../client/session/requests/acquire-deadlines.js";
import { DEFAULT_OPEN_TIMEOUT_MS } from "../../client/session/session-link.js";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { runTurnstile, type TurnstileRun } from "../harness/run-turnstile.js";
import { SilentServer } from "../harness/silent-server.js";

/** Starting the CLI through tsx, and closing it, on top of the bound (a shared 2-core machine). */
const STARTUP_SLACK_MS = 4000;

/** Exit 69, one line that says unreachable and names `address`, and nothing that suggests a holder. */
function expectUnreachable(run: TurnstileRun, address: string, boundMs: number): void {
  expect(run.code, run.stderr).to.equal(69);
  expect(run.stderr).to.match(/^turnstile lock: coordinator unreachable: cannot acquire "cli\/silent" from /);
  expect(run.stderr).to.include(address);
  expect(run.stderr.split("\n")).to.have.length(2);
  expect(run.stderr).not.to.match(/not acquired|held|holders|describe/);
  expect(run.ms).to.be.below(boundMs + STARTUP_SLACK_MS);
}

// `turnstile lock` against a coordinator that accepts TCP and never answers (README, *Exit codes*):
// it exits 69 naming the address within the open timeout, or within --wait plus the answer grace.
describe("turnstile lock against a coordinator that never answers", function () {
  this.timeout(40_000);
  let silent: SilentServer;
  let redis: TestRedis;
  let stopped: CoordinatorProcess;

  before(async () => {
    silent = await SilentServer.start();
    redis = await startRedis();
    stopped = await spawnCoordinator(redis.url);
    stopped.process.stdout?.resume();
    stopped.process.stderr?.resume();
    stopped.process.kill("SIGSTOP");
  });
  after(async () => {
    await stopped.kill();
    await redis.stop();
    await silent.stop();
  });

  it("a port that accepts and says nothing: exits 69 within the open timeout (no --wait)", async () => {
    const run = await runTurnstile(["lock", "--server", silent.address, "cli/silent", "--", "true"], {
      timeoutMs: 20_000,
    });
    expectUnreachable(run, silent.address, DEFAULT_OPEN_TIMEOUT_MS);
    expect(run.stderr).to.include(`did not answer the session's open within ${DEFAULT_OPEN_TIMEOUT_MS} ms`);
  });

  it("--wait 2s on a silent port: exits 69 (not 75) within 2 s + the answer grace, with no Describe added", async () => {
    const run = await runTurnstile(["lock", "--wait", "2s", "--server", silent.address, "cli/silent", "--", "true"], {
      timeoutMs: 20_000,
    });
    expectUnreachable(run, silent.address, 2000 + ANSWER_GRACE_MS);
  });

  it("--wait 2s on a SIGSTOPped coordinator: exits 69 within 2 s + the answer grace, naming its address", async () => {
    const run = await runTurnstile(["lock", "--wait", "2s", "--server", stopped.address, "cli/silent", "--", "true"], {
      timeoutMs: 20_000,
    });
    expectUnreachable(run, stopped.address, 2000 + ANSWER_GRACE_MS);
  });
});
