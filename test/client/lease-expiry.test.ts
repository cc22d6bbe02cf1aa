import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { TurnstileClient } from "../../client/index.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { waitForOutput } from "../harness/wait-for-output.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

const CHILD = fileURLToPath(new URL("../harness/holder-child.ts", import.meta.url));

describe("lease expiry of a paused holder", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
  });
  after(async () => {
    await coord.stop();
    await redis.stop();
  });

  it("ends the paused holder's lease locally before the next waiter is granted (within TTL + 1 s), and its signal has fired on waking", async () => {
    const ttlMs = 1500;
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, coord.address, "expiry/paused", String(ttlMs)], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const waiter = new TurnstileClient(coord.address, { ttlMs: 10_000 });
    try {
      const acquired = await waitForOutput(child, /"event":"acquired","token":"(\d+)"/, 10_000);
      const waiting = waiter.acquire("expiry/paused");
      child.stdin.write("freeze\n");
      const frozen = await waitForOutput(child, /"deadlineWallMs":([\d.]+)/, 5000);
      const frozenAt = Date.now();
      const lock = await waiting;
      const grantedAt = Date.now();
      // Told first: the holder's own deadline was already behind it when the waiter got the lock.
      expect(Number(frozen[1])).to.be.below(grantedAt);
      expect(grantedAt - frozenAt).to.be.below(ttlMs + 1000);
      expect(lock.fencingToken > BigInt(acquired[1])).to.equal(true);
      child.kill("SIGCONT");
      child.stdin.write("report\n");
      const report = await waitForOutput(child, /(\{"event":"report".*\})\n/, 5000);
      const parsed = JSON.parse(report[1]);
      expect([parsed.aborted, parsed.error]).to.deep.equal([true, "LostLockError"]);
      expect(["lease-unconfirmed", "expired"]).to.include(parsed.lostReason);
      await lock.release();
    } finally {
      child.kill("SIGKILL");
      await waiter.close();
    }
  });

  it("hands a paused holder's semaphore permit to the next waiter after its own signal fired, and leaves the other permit alone", async () => {
    const ttlMs = 1500;
    const name = "expiry/permit";
    const args = ["--import", "tsx", CHILD, coord.address, name, String(ttlMs), "semaphore:2"];
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
    const holder = new TurnstileClient(coord.address, { ttlMs: 10_000 });
    const waiter = new TurnstileClient(coord.address, { ttlMs: 10_000 });
    try {
      const acquired = await waitForOutput(child, /"event":"acquired","token":"(\d+)"/, 10_000);
      const mine = await holder.semaphore(name, 2).acquire();
      const waiting = waiter.semaphore(name, 2).acquire();
      await waitForQueue(redis.url, name, 1);
      child.stdin.write("freeze\n");
      const frozen = await waitForOutput(child, /"deadlineWallMs":([\d.]+)/, 5000);
      const lock = await waiting;
      const grantedAt = Date.now();
      expect(Number(frozen[1])).to.be.below(grantedAt);
      expect(lock.fencingToken > BigInt(acquired[1])).to.equal(true);
      expect([mine.lost, mine.signal.aborted]).to.deep.equal([false, false]);
      child.kill("SIGCONT");
      child.stdin.write("report\n");
      const report = JSON.parse((await waitForOutput(child, /(\{"event":"report".*\})\n/, 5000))[1]);
      expect([report.aborted, report.error]).to.deep.equal([true, "LostLockError"]);
      expect(["lease-unconfirmed", "expired"]).to.include(report.lostReason);
      await lock.release();
      await mine.release();
    } finally {
      child.kill("SIGKILL");
      await Promise.all([holder.close(), waiter.close()]);
    }
  });
});
