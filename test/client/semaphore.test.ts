import { expect } from "chai";
import { type Lock, TurnstileClient, TurnstileError } from "../../client/index.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

/** Rejects with `message` if `promise` has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe("Semaphore", () => {
  let redis: TestRedis;
  let coords: TestCoordinator[];
  const clients: TurnstileClient[] = [];
  const client = (i = 0) => {
    const c = new TurnstileClient(coords[i % coords.length].address, { ttlMs: 10_000 });
    clients.push(c);
    return c;
  };

  before(async () => {
    redis = await startRedis();
    coords = [await startCoordinator(redis.url), await startCoordinator(redis.url)];
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  });
  after(async () => {
    for (const c of coords) await c.stop();
    await redis.stop();
  });

  describe("acquire()", () => {
    it("never has more than 5 holders across 50 sessions × 20 cycles on two coordinators, uses all 5, and leaks no permit", async function () {
      this.timeout(60_000);
      const name = "sem/stress";
      const limit = 5;
      const sessions = Array.from({ length: 50 }, (_, i) => client(i));
      let inside = 0;
      let maxInside = 0;
      let cycles = 0;
      const tokens = new Set<bigint>();
      // The first holders stay inside until all 5 permits are held at once, so "all 5 used" is
      // seen for certain rather than by luck of timing; everyone after them just yields.
      let markFull: () => void = () => {};
      const full = new Promise<void>((resolve) => {
        markFull = resolve;
      });
      let wasFull = false;
      await Promise.all(
        sessions.map(async (c) => {
          const semaphore = c.semaphore(name, limit);
          for (let i = 0; i < 20; i++) {
            await semaphore.withPermit(async (lock) => {
              inside++;
              maxInside = Math.max(maxInside, inside);
              tokens.add(lock.fencingToken);
              if (inside === limit && !wasFull) {
                wasFull = true;
                markFull();
              }
              if (!wasFull) await within(full, 5000, "5 permits were never held at once");
              else await new Promise((resolve) => setImmediate(resolve));
              expect(lock.signal.aborted).to.equal(false);
              inside--;
              cycles++;
            });
          }
        }),
      );
      expect([cycles, maxInside, tokens.size]).to.deep.equal([1000, limit, 1000]);
      const probe = client().semaphore(name, limit);
      const permits: (Lock | null)[] = [];
      for (let i = 0; i <= limit; i++) permits.push(await probe.tryAcquire());
      expect(permits.map((p) => p !== null)).to.deep.equal([true, true, true, true, true, false]);
    });

    it("grants waiters first-in-first-out while every permit is taken", async () => {
      const name = "sem/fifo";
      const held = [await client().semaphore(name, 2).acquire(), await client(1).semaphore(name, 2).acquire()];
      const order: string[] = [];
      const waiters = new Map<string, Promise<Lock>>();
      for (const [i, id] of ["w1", "w2", "w3", "w4"].entries()) {
        const waiting = client(i).semaphore(name, 2).acquire();
        waiters.set(
          id,
          waiting.then((lock) => {
            order.push(id);
            return lock;
          }),
        );
        // Next waiter only once this one is in the queue: the arrival order is then known.
        await waitForQueue(redis.url, name, i + 1);
      }
      expect(await client().semaphore(name, 2).tryAcquire()).to.equal(null);
      await held[0].release();
      const w1 = await waiters.get("w1")!;
      await held[1].release();
      const w2 = await waiters.get("w2")!;
      expect(order).to.deep.equal(["w1", "w2"]);
      await w1.release();
      await (await waiters.get("w3")!).release();
      await w2.release();
      await (await waiters.get("w4")!).release();
      expect(order).to.deep.equal(["w1", "w2", "w3", "w4"]);
    });
  });

  describe("limit", () => {
    it("rejects a claim naming another limit with 'conflict', naming the limit in force", async () => {
      const name = "sem/conflict";
      const lock = await client().semaphore(name, 5).acquire();
      const err = await client(1)
        .semaphore(name, 3)
        .acquire()
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(TurnstileError);
      expect((err as TurnstileError).reason).to.equal("conflict");
      expect((err as TurnstileError).message).to.equal(
        `"${name}": acquire.limit: 3 differs from the SHARED limit 5 in force on "${name}" ` +
          "(it holds until nobody holds or waits for the name)",
      );
      const read = await client()
        .readWriteLock(name)
        .tryRead()
        .catch((e: unknown) => e);
      expect((read as TurnstileError).message).to.match(/acquire\.limit: 0 \(unlimited\) differs .* limit 5 in force/);
      await lock.release();
      const other = await client().semaphore(name, 3).acquire();
      expect(other.holdCount).to.equal(1);
    });

    it("rejects a re-entry by the same owner naming another limit with 'conflict'", async () => {
      const c = client();
      await c.semaphore("sem/reenter", 2).acquire({ owner: "o" });
      const again = await c.semaphore("sem/reenter", 2).acquire({ owner: "o" });
      expect(again.holdCount).to.equal(2);
      const err = await c
        .semaphore("sem/reenter", 4)
        .acquire({ owner: "o" })
        .catch((e: unknown) => e);
      expect((err as TurnstileError).reason).to.equal("conflict");
      expect((err as TurnstileError).message).to.match(/acquire\.limit: 4 differs from the SHARED limit 2 in force/);
    });

    it("rejects a limit over the server's maximum with 'invalid-argument' naming acquire.limit and the maximum", async () => {
      const err = await client()
        .semaphore("sem/huge", 1_000_001)
        .acquire()
        .catch((e: unknown) => e);
      expect([(err as TurnstileError).reason, (err as TurnstileError).message]).to.deep.equal([
        "invalid-argument",
        `"sem/huge": acquire.limit: 1000001 exceeds the maximum of 1000000`,
      ]);
    });

    it("throws 'invalid-argument' at once for a limit that is not an integer from 1 to 2^32 - 1", () => {
      for (const limit of [0, -1, 1.5, Number.NaN, 2 ** 32]) {
        expect(() => client().semaphore("sem/bad", limit), String(limit))
          .to.throw(TurnstileError, /semaphore limit must be an integer from 1 to 4294967295/)
          .with.property("reason", "invalid-argument");
      }
    });
  });
});
