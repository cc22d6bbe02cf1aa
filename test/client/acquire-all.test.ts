import { credentials } from "@grpc/grpc-js";
import { expect } from "chai";
import { type LockSet, TurnstileClient, type TurnstileError } from "../../client/index.js";
import { type DescribeResponse, LockServiceClient } from "../../gen/ts/turnstile/v1/turnstile.js";
import { startEmbeddedCoordinator } from "../harness/embedded-coordinator.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator } from "../harness/test-coordinator.js";
import { unary } from "../harness/unary.js";
import { until } from "../harness/until.js";

/** A coordinator under test and how to stop it (and its Redis). */
interface Served {
  address: string;
  stop(): Promise<void>;
}

async function onRedis(): Promise<Served> {
  const redis: TestRedis = await startRedis();
  const coord = await startCoordinator(redis.url);
  return {
    address: coord.address,
    stop: async () => {
      await coord.stop();
      await redis.stop();
    },
  };
}

async function onMemory(): Promise<Served> {
  const { coordinator, address } = await startEmbeddedCoordinator();
  return { address, stop: () => coordinator.stop() };
}

/** The error `promise` rejects with; fails the test if it resolves. */
async function rejection(promise: Promise<unknown>): Promise<TurnstileError> {
  try {
    await promise;
  } catch (error) {
    return error as TurnstileError;
  }
  throw new Error("expected a rejection");
}

for (const [backend, start] of [
  ["Redis", onRedis],
  ["the memory store", onMemory],
] as const) {
  describe(`acquireAll() and withLocks() on ${backend}`, () => {
    let served: Served;
    let rpc: LockServiceClient;
    const clients: TurnstileClient[] = [];
    const client = () => {
      const c = new TurnstileClient(served.address, { ttlMs: 10_000 });
      clients.push(c);
      return c;
    };
    const describeLock = (name: string) => unary<{ name: string }, DescribeResponse>(rpc.describe.bind(rpc), { name });
    /** Resolves once `count` waiters are queued on `name` (Describe, polled). */
    const queuedOn = (name: string, count: number) =>
      until(async () => (await describeLock(name)).waiters.length >= count, `${count} waiters on ${name}`, 5000, 5);

    before(async () => {
      served = await start();
      rpc = new LockServiceClient(served.address, credentials.createInsecure());
    });
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
    });
    after(async () => {
      rpc.close();
      await served.stop();
    });

    it("grants every name together, one fencing token per name, each lock releasable alone", async () => {
      const c = client();
      const set = await c.acquireAll(["all/a", { name: "all/b" }]);
      expect(set.locks.map((l) => l.name)).to.deep.equal(["all/a", "all/b"]);
      expect([...set.tokens.keys()]).to.deep.equal(["all/a", "all/b"]);
      for (const lock of set.locks) expect(lock.fencingToken > 0n).to.equal(true);
      await set.lock("all/a").release();
      expect(await client().tryAcquire("all/a")).to.not.equal(null);
      expect(await client().tryAcquire("all/b")).to.equal(null);
      await set.release();
      expect(await client().tryAcquire("all/b")).to.not.equal(null);
    });

    it("waits while a name is held, holding none meanwhile, and is granted when its last busy name is released", async () => {
      const holders = client();
      const [b, c] = [await holders.acquire("wait/b"), await holders.acquire("wait/c")];
      const pending = client().acquireAll(["wait/a", "wait/b", "wait/c"]);
      await queuedOn("wait/a", 1);
      // It holds none of its names: another client takes the free one at once, and gives it back.
      const other = client();
      const a = await other.tryAcquire("wait/a");
      expect(a).to.not.equal(null);
      await a?.release();
      await b.release();
      // Still waiting for c: b is free for anyone, since the set took nothing.
      const bAgain = await other.tryAcquire("wait/b");
      expect(bAgain).to.not.equal(null);
      await bAgain?.release();
      await c.release();
      const set = await pending;
      expect(set.locks.map((l) => l.name)).to.deep.equal(["wait/a", "wait/b", "wait/c"]);
      await set.release();
    });

    it("is overtaken on a name by a plain waiter behind it while another of its names is held", async () => {
      const holders = client();
      const [x, y] = [await holders.acquire("over/x"), await holders.acquire("over/y")];
      const pendingSet = client().acquireAll(["over/x", "over/y"]);
      await queuedOn("over/x", 1);
      const single = client().acquire("over/x");
      await queuedOn("over/x", 2);
      await x.release();
      const overtaker = await single;
      expect(overtaker.name).to.equal("over/x");
      await y.release();
      await overtaker.release();
      await (await pendingSet).release();
    });

    it("tries once with waitMs 0: 'busy' naming the held name, queueing nothing", async () => {
      const held = await client().acquire("once/b");
      const error = await rejection(client().acquireAll(["once/a", "once/b"], { waitMs: 0 }));
      expect([error.reason, error.message]).to.deep.equal([
        "busy",
        `"once/b": acquire_all: "once/b" is held (wait was zero: tried once)`,
      ]);
      expect((await describeLock("once/a")).waiters).to.deep.equal([]);
      await held.release();
    });

    it("times out naming in blockedBy the holders of each name it waited for", async () => {
      const holders = client();
      await holders.acquire("late/a", { owner: "owner-a" });
      await holders.acquire("late/b", { owner: "owner-b" });
      const error = await rejection(client().acquireAll(["late/a", "late/b", "late/c"], { waitMs: 200 }));
      expect(error.reason).to.equal("timeout");
      expect(error.blockedBy.map((b) => [b.name, b.owner])).to.deep.equal([
        ["late/a", "owner-a"],
        ["late/b", "owner-b"],
      ]);
      for (const name of ["late/a", "late/b", "late/c"])
        expect((await describeLock(name)).waiters, name).to.deep.equal([]);
    });

    it("is withdrawn from every name when aborted", async () => {
      const held = await client().acquire("abort/b");
      const controller = new AbortController();
      const pending = client().acquireAll(["abort/a", "abort/b"], { signal: controller.signal });
      await queuedOn("abort/a", 1);
      controller.abort(new Error("stop"));
      expect((await rejection(pending)).message).to.equal("stop");
      await until(async () => (await describeLock("abort/b")).waiters.length === 0, "withdrawn", 5000, 5);
      expect((await describeLock("abort/a")).waiters).to.deep.equal([]);
      await held.release();
      expect(await client().tryAcquire("abort/b")).to.not.equal(null);
    });

    it("refuses bad input with invalid-argument naming the field", async () => {
      const c = client();
      const cases: [string[], RegExp][] = [
        [[], /acquire_all\.locks: must not be empty/],
        [["dup/a", "dup/b", "dup/a"], /acquire_all\.locks\[2\]\.name: "dup\/a" is named twice \(also locks\[0\]\)/],
        [Array.from({ length: 17 }, (_, i) => `many/${i}`), /acquire_all\.locks: 17 locks exceeds the maximum of 16/],
        [["ok", ""], /acquire_all\.locks\[1\]\.name: must not be empty/],
      ];
      for (const [names, message] of cases) {
        const error = await rejection(c.acquireAll(names));
        expect(error.reason, String(names)).to.equal("invalid-argument");
        expect(error.message).to.match(message);
      }
      // The session is unharmed.
      await (await c.acquireAll(["dup/a"])).release();
    });

    it("never deadlocks: two clients taking {x, y} and {y, x} over and over both finish", async () => {
      const [one, two] = [client(), client()];
      const loop = async (c: TurnstileClient, names: string[]) => {
        for (let i = 0; i < 25; i++) await c.withLocks(names, async (set: LockSet) => set.tokens.size);
      };
      await Promise.all([loop(one, ["dl/x", "dl/y"]), loop(two, ["dl/y", "dl/x"])]);
    });

    it("shows a waiting set's names in Describe (set_names) on each of its names", async () => {
      const held = await client().acquire("show/b");
      const pending = client().acquireAll(["show/a", "show/b"], { owner: "mover" });
      await queuedOn("show/a", 1);
      for (const name of ["show/a", "show/b"]) {
        const [waiter] = (await describeLock(name)).waiters;
        expect([waiter.owner, waiter.setNames], name).to.deep.equal(["mover", ["show/a", "show/b"]]);
      }
      await held.release();
      await (await pending).release();
    });

    it("withLocks() runs the function with the set and releases it after, also when it throws", async () => {
      const c = client();
      const tokens = await c.withLocks(["with/a", "with/b"], (set) => [...set.tokens.values()]);
      expect(tokens).to.have.length(2);
      const failure = new Error("inside");
      expect(await rejection(c.withLocks(["with/a", "with/b"], () => Promise.reject(failure)))).to.equal(failure);
      await (await client().acquireAll(["with/a", "with/b"], { waitMs: 0 })).release();
    });
  });
}
