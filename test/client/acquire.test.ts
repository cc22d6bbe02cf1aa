import { expect } from "chai";
import { LostLockError, TurnstileClient, TurnstileError } from "../../client/index.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

describe("TurnstileClient", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  const clients: TurnstileClient[] = [];
  const client = (ttlMs = 10_000) => {
    const c = new TurnstileClient(coord.address, { ttlMs });
    clients.push(c);
    return c;
  };

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  });
  after(async () => {
    await coord.stop();
    await redis.stop();
  });

  describe("acquire()", () => {
    it("resolves with a held Lock carrying a fencing token and a live signal", async () => {
      const lock = await client().acquire("client/basic");
      expect(lock.fencingToken > 0n).to.equal(true);
      expect([lock.name, lock.holdCount, lock.lost, lock.signal.aborted]).to.deep.equal([
        "client/basic",
        1,
        false,
        false,
      ]);
      expect(lock.leaseRemainingMs).to.be.above(0);
      await lock.release();
      expect(lock.signal.aborted).to.equal(true);
      expect(lock.lost).to.equal(false);
      expect(lock.leaseRemainingMs).to.equal(0);
    });

    it("rejects a name or owner with a lone surrogate with 'invalid-argument' and takes no lock", async () => {
      const c = client();
      for (const [name, owner, field] of [
        ["client/a\udcff", undefined, "name"],
        ["client/b", "o\ud800", "owner"],
      ] as const) {
        const err = await c.acquire(name, { owner }).catch((e: unknown) => e);
        expect(err).to.be.instanceOf(TurnstileError).with.property("reason", "invalid-argument");
        expect((err as Error).message).to.equal(`${field}: not valid UTF-8 (a lone surrogate)`);
      }
      // Not the U+FFFD lock either: another client gets it at once.
      const other = await client().tryAcquire("client/a\uFFFD");
      expect(other).to.not.equal(null);
      await other?.release();
    });

    it("gives a signal first read after release() that is already aborted with an AbortError", async () => {
      const lock = await client().acquire("client/late-signal");
      await lock.release();
      const { signal } = lock;
      expect([signal.aborted, (signal.reason as Error).name]).to.deep.equal([true, "AbortError"]);
    });

    it("waits while another client holds the lock and resolves when it releases", async () => {
      const first = await client().acquire("client/wait");
      const waiting = client().acquire("client/wait");
      const order: string[] = [];
      void waiting.then(() => order.push("granted"));
      await new Promise((resolve) => setImmediate(resolve));
      order.push("released");
      await first.release();
      const second = await waiting;
      expect(order).to.deep.equal(["released", "granted"]);
      expect(second.fencingToken).to.equal(first.fencingToken + 1n);
    });

    it("rejects with TurnstileError 'timeout' naming in blockedBy the holder it waited behind", async () => {
      const named = new TurnstileClient(coord.address, { clientName: "the-holder" });
      clients.push(named);
      const held = await named.acquire("client/timeout", { owner: "job-7" });
      const err = await client()
        .acquire("client/timeout", { waitMs: 100 })
        .catch((e) => e);
      expect(err).to.be.instanceOf(TurnstileError);
      expect(err.reason).to.equal("timeout");
      expect(err.blockedBy).to.have.length(1);
      const [b] = err.blockedBy;
      expect(b).to.include({ owner: "job-7", clientName: "the-holder", fencingToken: held.fencingToken });
      expect(b.heldForMs).to.be.at.least(100);
    });

    it("rejects with AbortError when aborted while waiting, and the server drops the waiter", async () => {
      const holder = await client().acquire("client/abort");
      const controller = new AbortController();
      const aborted = client()
        .acquire("client/abort", { signal: controller.signal })
        .catch((e) => e);
      const next = client().acquire("client/abort");
      await waitForQueue(redis.url, "client/abort", 2);
      controller.abort();
      expect((await aborted).name).to.equal("AbortError");
      await holder.release();
      const lock = await next;
      expect(lock.fencingToken).to.equal(holder.fencingToken + 1n);
    });

    it("re-enters with the same owner: same token, hold count 2, lock free only after both releases", async () => {
      const c = client();
      const a = await c.acquire("client/reentry", { owner: "job" });
      const b = await c.acquire("client/reentry", { owner: "job" });
      expect([b.fencingToken, b.holdCount]).to.deep.equal([a.fencingToken, 2]);
      await b.release();
      expect(await client().tryAcquire("client/reentry")).to.equal(null);
      await a.release();
      expect(await client().tryAcquire("client/reentry")).to.not.equal(null);
    });

    it("makes two acquires without an owner in one client exclude each other", async () => {
      const c = client();
      const a = await c.acquire("client/same-process");
      const err = await c.acquire("client/same-process", { waitMs: 0 }).catch((e) => e);
      expect(err.reason).to.equal("busy");
      await a.release();
    });
  });

  describe("tryAcquire()", () => {
    it("resolves null when the lock is held elsewhere", async () => {
      await client().acquire("client/try");
      expect(await client().tryAcquire("client/try")).to.equal(null);
    });
  });

  describe("withLock()", () => {
    it("releases the lock when the callback throws, and rethrows", async () => {
      const c = client();
      const err = await c
        .withLock("client/with", async () => {
          throw new Error("boom");
        })
        .catch((e) => e);
      expect(err.message).to.equal("boom");
      expect(await client().tryAcquire("client/with")).to.not.equal(null);
    });
  });

  describe("close()", () => {
    it("releases every lock at once so a waiter gets it", async () => {
      const c = client();
      const held = await c.acquire("client/close");
      const waiting = client().acquire("client/close");
      await c.close();
      expect(held.signal.aborted).to.equal(true);
      expect((await waiting).fencingToken).to.equal(held.fencingToken + 1n);
    });
  });

  describe("lease", () => {
    it("aborts the signal with LostLockError 'lease-unconfirmed' when keepalive acks stop (Redis paused), and leaseRemainingMs is then 0", async function () {
      this.timeout(30_000);
      const lock = await client(1500).acquire("client/lease");
      const lost = new Promise<unknown>((resolve) =>
        lock.signal.addEventListener("abort", () => resolve(lock.signal.reason), { once: true }),
      );
      redis.process.kill("SIGSTOP");
      try {
        const reason = await lost;
        expect(reason).to.be.instanceOf(LostLockError);
        expect((reason as LostLockError).lostReason).to.equal("lease-unconfirmed");
        expect(lock.lost).to.equal(true);
        expect(lock.leaseRemainingMs).to.equal(0);
      } finally {
        redis.process.kill("SIGCONT");
      }
    });
  });
});
