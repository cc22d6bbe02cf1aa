import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { runTurnstile, spawnTurnstile } from "../harness/run-turnstile.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { waitForOutput } from "../harness/wait-for-output.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

/** A shell command that prints "holding PID" and runs until `file` exists. */
const holdUntil = (file: string) => ["sh", "-c", `echo holding $$; while [ ! -e ${file} ]; do sleep 0.05; done`];

describe("turnstile lock", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  let dir: string;
  let env: Record<string, string>;

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
    dir = mkdtempSync(join(tmpdir(), "turnstile-lock-"));
    env = { TURNSTILE_SERVER: coord.address };
  });
  after(async () => {
    await coord.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs the command with the fencing token and lock name in its environment and passes its exit code through", async () => {
    const run = await runTurnstile(
      ["lock", "cli/env", "--", "sh", "-c", 'echo "$TURNSTILE_LOCK_NAME $TURNSTILE_FENCING_TOKEN"; exit 3'],
      { env },
    );
    expect([run.code, run.stdout, run.stderr]).to.deep.equal([3, "cli/env 1\n", ""]);
  });

  it("makes a second turnstile lock wait until the first one's command has ended, then runs with a greater token", async () => {
    const release = join(dir, "release-wait");
    const first = spawnTurnstile(["lock", "cli/wait", "--", ...holdUntil(release)], { env });
    await waitForOutput(first.child, /holding/, 10_000);
    const second = spawnTurnstile(["lock", "cli/wait", "--", "sh", "-c", "echo second $TURNSTILE_FENCING_TOKEN"], {
      env,
    });
    await waitForQueue(redis.url, "cli/wait", 1, 10_000);
    expect(second.child.exitCode).to.equal(null);
    writeFileSync(release, "");
    const [a, b] = await Promise.all([first.done, second.done]);
    expect([a.code, b.code, b.stdout]).to.deep.equal([0, 0, "second 2\n"]);
  });

  it("asks for --lock-delay: once an operator revokes the hold, describe shows the lock delayed", async () => {
    const release = join(dir, "release-delay");
    const holder = spawnTurnstile(["lock", "--lock-delay", "30s", "cli/delay", "--", ...holdUntil(release)], { env });
    await waitForOutput(holder.child, /holding/, 10_000);
    const held = JSON.parse((await runTurnstile(["describe", "--output", "json", "cli/delay"], { env })).stdout);
    expect(held.delayRemainingMs).to.equal(undefined);
    const revoked = await runTurnstile(["revoke", "cli/delay", held.holders[0].holder], { env });
    expect(revoked.code, revoked.stderr).to.equal(0);
    const after = JSON.parse((await runTurnstile(["describe", "--output", "json", "cli/delay"], { env })).stdout);
    expect(after.delayRemainingMs).to.be.within(25_000, 30_000);
    // Nobody holds it, yet nobody may take it: a try-once and a wait that runs out say why (issue 32).
    const [once, timed] = await Promise.all([
      runTurnstile(["lock", "--wait", "0", "cli/delay", "--", "true"], { env }),
      runTurnstile(["lock", "--quiet", "--wait", "300ms", "cli/delay", "--", "true"], { env }),
    ]);
    const delayText = String.raw`nobody holds it, but a lock-delay is in force for \d+s more \(a hold ended without a release\)\n$`;
    expect([once.code, timed.code]).to.deep.equal([75, 75]);
    expect(once.stderr).to.match(
      new RegExp(`^turnstile lock: "cli/delay" not acquired \\(tried once\\): ${delayText}`),
    );
    expect(timed.stderr).to.match(new RegExp(`^turnstile lock: "cli/delay" not acquired within 300ms: ${delayText}`));
    writeFileSync(release, "");
    expect((await holder.done).code).to.equal(76);
  });

  it("exits 75 with a message when the lock is not acquired within --wait, or at once with --wait 0", async () => {
    const release = join(dir, "release-busy");
    const holder = spawnTurnstile(["lock", "cli/busy", "--", ...holdUntil(release)], { env });
    await waitForOutput(holder.child, /holding/, 10_000);
    const [timed, once] = await Promise.all([
      runTurnstile(["lock", "--quiet", "--wait", "300ms", "cli/busy", "--", "true"], { env }),
      runTurnstile(["lock", "--wait", "0", "cli/busy", "--", "true"], { env }),
    ]);
    writeFileSync(release, "");
    await holder.done;
    // Each names the holder as revoke takes it (SESSION_ID/OWNER) with its client: once, on one line.
    const holderText = String.raw`held by [0-9a-f]{32}/[0-9a-f-]{36} \(client turnstile-lock@[^,]+, held for \d+m?s\)\n$`;
    expect(timed.code).to.equal(75);
    expect(timed.stderr).to.match(new RegExp(`^turnstile lock: "cli/busy" not acquired within 300ms: ${holderText}`));
    expect(once.code).to.equal(75);
    expect(once.stderr).to.match(
      new RegExp(`^turnstile lock: "cli/busy" not acquired \\(tried once\\): ${holderText}`),
    );
  });

  it("exits 127 when the command is not found, 69 when the coordinator is unreachable, 2 on bad usage", async () => {
    const [missing, unreachable, noCommand, badWait, negativeWait] = await Promise.all([
      runTurnstile(["lock", "cli/missing", "--", "no-such-command-here"], { env }),
      runTurnstile(["lock", "--server", "127.0.0.1:1", "cli/x", "--", "true"]),
      runTurnstile(["lock", "cli/x"], { env }),
      runTurnstile(["lock", "--wait", "soon", "cli/x", "--", "true"], { env }),
      runTurnstile(["lock", "--wait", "-1s", "cli/x", "--", "true"], { env }),
    ]);
    expect(missing.code).to.equal(127);
    expect(missing.stderr).to.match(/^turnstile lock: cannot run no-such-command-here: .*ENOENT/);
    expect(unreachable.code).to.equal(69);
    expect(unreachable.stderr).to.match(
      /^turnstile lock: coordinator unreachable: cannot acquire "cli\/x" from 127.0.0.1:1: .*ECONNREFUSED 127\.0\.0\.1:1\n$/,
    );
    expect(unreachable.stderr).not.to.include("Resolution note");
    expect([noCommand.code, badWait.code, negativeWait.code]).to.deep.equal([2, 2, 2]);
    expect(noCommand.stderr).to.match(/^turnstile lock: give the command after --/);
    expect(badWait.stderr).to.match(/^turnstile lock: --wait "soon" is not a duration/);
    expect(negativeWait.stderr).to.equal(
      'turnstile lock: --wait "-1s" is out of range: must be 0..2147483647ms (0 tries once, leave --wait out to wait forever) (see turnstile lock --help)\n',
    );
  });

  it("lists its options and exit codes in --help", async () => {
    const run = await runTurnstile(["lock", "--help"]);
    expect(run.code).to.equal(0);
    for (const text of ["--server", "--wait", "--ttl", "--grace", "TURNSTILE_FENCING_TOKEN", "76 lock lost"])
      expect(run.stdout).to.include(text);
  });

  describe("when the lock is lost", () => {
    let paused: TestRedis;
    let pausedCoord: TestCoordinator;

    before(async () => {
      paused = await startRedis();
      pausedCoord = await startCoordinator(paused.url);
    });
    after(async () => {
      paused.process.kill("SIGCONT");
      await pausedCoord.stop();
      await paused.stop();
    });

    it("stops the command (SIGTERM, then SIGKILL after --grace) and exits 76 with a message when Redis stops answering", async () => {
      // The command ignores SIGTERM, so only the SIGKILL after the grace period ends it.
      const stubborn = ["sh", "-c", 'trap "" TERM; echo holding $$; while :; do sleep 0.1; done'];
      const cli = spawnTurnstile(["lock", "--ttl", "2s", "--grace", "300ms", "cli/lost", "--", ...stubborn], {
        env: { TURNSTILE_SERVER: pausedCoord.address },
      });
      const holding = await waitForOutput(cli.child, /holding (\d+)/, 10_000);
      paused.process.kill("SIGSTOP");
      const run = await cli.done;
      paused.process.kill("SIGCONT");
      expect(run.code).to.equal(76);
      expect(run.stderr).to.match(
        /^turnstile lock: lost "cli\/lost" \((lease-unconfirmed|expired)\): stopping the command \(SIGTERM, SIGKILL after 300 ms\)\n$/,
      );
      // Within the 2 s lease plus the grace period, not at the end of some longer timeout.
      expect(run.ms).to.be.below(8000);
      expect(isRunning(Number(holding[1]))).to.equal(false);
    });
  });
});

/** True while `pid` is a live process (a zombie counts as ended). */
function isRunning(pid: number): boolean {
  try {
    return !/\nState:\s+Z/.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}
