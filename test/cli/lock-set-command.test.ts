import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { runTurnstile, spawnTurnstile } from "../harness/run-turnstile.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { waitForOutput } from "../harness/wait-for-output.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

const ENV_LINE = 'echo "$TURNSTILE_FENCING_TOKENS|$TURNSTILE_LOCK_NAME|$TURNSTILE_FENCING_TOKEN"';

// `turnstile lock a b c -- command`: several names acquired together (acquireAll).
describe("turnstile lock with several NAMEs", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  let dir: string;
  let env: Record<string, string>;

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
    dir = mkdtempSync(join(tmpdir(), "turnstile-lock-set-"));
    env = { TURNSTILE_SERVER: coord.address };
  });
  after(async () => {
    await coord.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs the command holding all of them, with every token in TURNSTILE_FENCING_TOKENS", async () => {
    const first = await runTurnstile(["lock", "set/b", "--", "true"], { env });
    expect(first.code).to.equal(0);
    const run = await runTurnstile(["lock", "set/a", "set/b", "a,b=c", "--", "sh", "-c", ENV_LINE], { env });
    expect([run.code, run.stderr]).to.deep.equal([0, ""]);
    expect(run.stdout).to.equal("set/a=1,set/b=2,a%2Cb%3Dc=1|set/a|1\n");
  });

  it("waits while one of them is held, then runs; --wait 0 says which one is held and exits 75", async () => {
    const release = join(dir, "release");
    const holder = spawnTurnstile(
      ["lock", "held/b", "--", "sh", "-c", `echo holding; while [ ! -e ${release} ]; do sleep 0.05; done`],
      { env },
    );
    await waitForOutput(holder.child, /holding/, 10_000);
    const once = await runTurnstile(["lock", "--wait", "0", "held/a", "held/b", "--", "true"], { env });
    expect(once.code).to.equal(75);
    expect(once.stderr).to.match(/^turnstile lock: "held\/a", "held\/b" not acquired \(tried once\): /);
    const waiter = spawnTurnstile(["lock", "--quiet", "held/a", "held/b", "--", "sh", "-c", ENV_LINE], { env });
    await waitForQueue(redis.url, "held/a", 1, 10_000);
    const described = await runTurnstile(["describe", "--output", "json", "held/b"], { env });
    const [waiting] = JSON.parse(described.stdout).waiters;
    expect(waiting.setNames).to.deep.equal(["held/a", "held/b"]);
    const table = await runTurnstile(["describe", "held/a"], { env });
    expect(table.stdout).to.include('exclusive, set of "held/a" "held/b"');
    writeFileSync(release, "");
    const [h, w] = await Promise.all([holder.done, waiter.done]);
    expect([h.code, w.code, w.stdout]).to.deep.equal([0, 0, "held/a=1,held/b=2|held/a|1\n"]);
  });

  it("exits 2 naming the problem when a NAME is given twice or there are more than 16", async () => {
    const many = Array.from({ length: 17 }, (_, i) => `many/${i}`);
    const [twice, tooMany] = await Promise.all([
      runTurnstile(["lock", "dup/a", "dup/b", "dup/a", "--", "true"], { env }),
      runTurnstile(["lock", ...many, "--", "true"], { env }),
    ]);
    expect([twice.code, tooMany.code]).to.deep.equal([2, 2]);
    expect(twice.stderr).to.equal('turnstile lock: NAME "dup/a" is given twice (see turnstile lock --help)\n');
    expect(tooMany.stderr).to.equal(
      "turnstile lock: give at most 16 lock NAMEs (acquired together), got 17 (see turnstile lock --help)\n",
    );
  });
});
