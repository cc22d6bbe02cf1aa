import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { runTurnstile, spawnTurnstile, type TurnstileProcess } from "../harness/run-turnstile.js";
import { waitForOutput } from "../harness/wait-for-output.js";

// Release requests from the command line (docs/elections.md): turnstile ask-release, what turnstile
// describe shows of them, and turnstile lock --on-release-request forwarding one to its command.
// Real `turnstile serve` and `turnstile lock` processes on the embedded store.
describe("turnstile ask-release, describe and lock --on-release-request (processes)", () => {
  let coordinator: TurnstileProcess;
  let env: Record<string, string>;
  let dir: string;

  before(async function () {
    this.timeout(60_000);
    coordinator = spawnTurnstile(["serve", "--listen", "127.0.0.1:0"], { timeoutMs: 300_000 });
    const [, port] = await waitForOutput(coordinator.child, /"port":(\d+)[^\n]*"msg":"listening"/, 30_000);
    env = { TURNSTILE_SERVER: `127.0.0.1:${port}` };
    dir = mkdtempSync(join(tmpdir(), "turnstile-ask-release-"));
  });
  after(async () => {
    coordinator?.child.kill("SIGTERM");
    await coordinator?.done;
    rmSync(dir, { recursive: true, force: true });
  });

  it("asks the holder, whose turnstile lock sends its command the signal and says who asked and why", async function () {
    this.timeout(60_000);
    const script = 'trap "echo got-usr1; exit 0" USR1; echo holding; while true; do sleep 0.05; done';
    const lock = spawnTurnstile(["lock", "ho/cli-a", "--on-release-request", "USR1", "--", "sh", "-c", script], {
      env,
      timeoutMs: 60_000,
    });
    await waitForOutput(lock.child, /holding/, 30_000);
    const asked = await runTurnstile(["ask-release", "ho/cli-a", "--reason", "deploy v2"], { env, timeoutMs: 30_000 });
    expect([asked.code, asked.stdout, asked.stderr]).to.deep.equal([0, 'asked 1 holder of "ho/cli-a" to let go\n', ""]);
    const ended = await lock.done;
    expect(ended.code, ended.stderr).to.equal(0);
    expect(ended.stdout).to.include("got-usr1");
    expect(ended.stderr).to.include(
      'turnstile lock: operator asks to release "ho/cli-a" ("deploy v2"): sending SIGUSR1',
    );
  });

  it("shows a pending request in describe (table and JSON); the holder keeps the lock", async function () {
    this.timeout(60_000);
    const file = join(dir, "release-b");
    const lock = spawnTurnstile(
      ["lock", "ho/cli-b", "--", "sh", "-c", `echo holding; while [ ! -e ${file} ]; do sleep 0.05; done`],
      { env, timeoutMs: 60_000 },
    );
    try {
      await waitForOutput(lock.child, /holding/, 30_000);
      expect((await runTurnstile(["ask-release", "ho/cli-b", "--reason", "maintenance"], { env })).code).to.equal(0);
      const table = await runTurnstile(["describe", "ho/cli-b"], { env });
      expect(table.stdout).to.match(
        /Release requested:\nHOLDER +BY +REASON\n[0-9a-f]{32}\/\S+ +operator +"maintenance"\n/,
      );
      const json = JSON.parse((await runTurnstile(["describe", "ho/cli-b", "--output", "json"], { env })).stdout);
      expect(json.holders[0].releaseRequest).to.deep.equal({ requester: "operator", reason: "maintenance" });
    } finally {
      writeFileSync(file, "");
      expect((await lock.done).code).to.equal(0);
    }
  });

  it("refuses bad usage with exit 2 naming the flag, and a lock nobody holds with exit 69 (NOT_FOUND)", async function () {
    this.timeout(60_000);
    const noReason = await runTurnstile(["ask-release", "ho/cli-c"], { env });
    expect([noReason.code, noReason.stderr]).to.deep.equal([
      2,
      "turnstile ask-release: --reason is required (say why you ask the holder to let go) (see turnstile ask-release --help)\n",
    ]);
    const long = await runTurnstile(["ask-release", "ho/cli-c", "--reason", "x".repeat(257)], { env });
    expect(long.code).to.equal(2);
    expect(long.stderr).to.include("--reason is 257 bytes: the maximum is 256 bytes (UTF-8)");
    const nobody = await runTurnstile(["ask-release", "ho/cli-c", "--reason", "x"], { env });
    expect(nobody.code).to.equal(69);
    expect(nobody.stderr).to.equal(
      'turnstile ask-release: cannot ask the holders of "ho/cli-c": request release failed: NOT_FOUND request_release: nobody holds "ho/cli-c"\n',
    );
    const badSignal = await runTurnstile(["lock", "ho/cli-c", "--on-release-request", "BOGUS", "--", "true"], { env });
    expect([badSignal.code, badSignal.stderr]).to.deep.equal([
      2,
      'turnstile lock: --on-release-request "BOGUS" is not a signal name (e.g. SIGUSR1, USR1, SIGHUP) (see turnstile lock --help)\n',
    ]);
  });
});
