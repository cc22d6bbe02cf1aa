import { expect } from "chai";
import { type Lock, TurnstileClient, TurnstileError } from "../../client/index.js";
import type { Coordinator } from "../../server/coordinator.js";
import { startEmbeddedCoordinator } from "../harness/embedded-coordinator.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator } from "../harness/test-coordinator.js";

/** The documented detection bound (docs/deadlocks.md) with room for a loaded test machine. */
const FOUND_WITHIN_MS = 2500;
/** How long the negative checks watch: several detector looks (one every 300 ms). */
const QUIET_MS = 2000;
/** How long the other waits of a cycle are watched after its victim failed: three detector looks. */
const ONE_VICTIM_MS = 1000;

/** A test deployment: coordinators (one or more) serving one store. */
interface Deployment {
  addresses: string[];
  coordinators: Coordinator[];
  stop(): Promise<void>;
}

/** The settled value of `p`, or "pending" if it has not settled within `ms`. */
async function settledWithin<T>(p: Promise<T>, ms: number): Promise<{ value?: T; error?: unknown } | "pending"> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<"pending">((resolve) => {
    timer = setTimeout(() => resolve("pending"), ms);
  });
  try {
    return await Promise.race([
      p.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      pending,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The deadlock error `p` rejected with within the bound (fails the test otherwise). */
async function deadlockOf(p: Promise<unknown>): Promise<TurnstileError> {
  const out = await settledWithin(p, FOUND_WITHIN_MS);
  expect(out, "the victim's acquire ended within the bound").to.not.equal("pending");
  const { error } = out as { error?: unknown };
  expect(error).to.be.instanceOf(TurnstileError);
  expect((error as TurnstileError).reason).to.equal("deadlock");
  return error as TurnstileError;
}

/** Resolves with the acquire once the server has queued it (so arrival order is known). */
async function queuedAcquire(c: TurnstileClient, name: string, owner: string): Promise<{ lock: Promise<Lock> }> {
  let queued!: () => void;
  const isQueued = new Promise<void>((resolve) => {
    queued = resolve;
  });
  const lock = c.acquire(name, { owner, onQueued: () => queued() });
  lock.catch(() => {}); // awaited by the test
  await Promise.race([isQueued, lock]);
  return { lock };
}

function deadlockSuite(what: string, deploy: () => Promise<Deployment>): void {
  describe(`deadlock detection: ${what}`, function () {
    this.timeout(20_000);
    let d: Deployment;
    const clients: TurnstileClient[] = [];
    let n = 0;
    const client = (i: number, clientName: string) => {
      const c = new TurnstileClient(d.addresses[i % d.addresses.length], { clientName });
      clients.push(c);
      return c;
    };
    const name = (s: string) => `dl/${what}/${n}/${s}`;
    /** Every hold-and-wait entry in the store's registry now. */
    const registry = () => d.coordinators[0].store.waits.list(Date.now());

    before(async () => {
      d = await deploy();
    });
    beforeEach(() => {
      n++;
    });
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.close()));
    });
    after(async () => {
      await d.stop();
    });

    it("fails the younger of a 2-cycle with DEADLOCK naming the cycle; the other is granted once the victim lets go", async () => {
      const [x, y] = [name("x"), name("y")];
      const a = client(0, "worker-a");
      const b = client(1, "worker-b");
      await a.acquire(x, { owner: "oa" });
      const yHeld = await b.acquire(y, { owner: "ob" });
      const aWaits = await queuedAcquire(a, y, "oa");
      const bWaits = await queuedAcquire(b, x, "ob");
      const err = await deadlockOf(bWaits.lock);
      expect(err.deadlockCycle.map((s) => [s.owner, s.clientName, s.name])).to.deep.equal([
        ["ob", "worker-b", x],
        ["oa", "worker-a", y],
      ]);
      expect(err.message).to.include(`"${x}": acquire: deadlock:`);
      expect(err.message).to.include(`/ob "worker-b") waits for "${x}" held by (`);
      expect(err.message).to.include(`/oa "worker-a"), which waits for "${y}" held by (`);
      // Exactly one victim, and its session keeps what it holds: A still waits (for several detector
      // looks), until B lets y go.
      expect(await settledWithin(aWaits.lock, ONE_VICTIM_MS)).to.equal("pending");
      await yHeld.release();
      const granted = await aWaits.lock;
      expect(granted.name).to.equal(y);
    });

    it("fails exactly one waiter of a 3-cycle, the youngest", async () => {
      const [x, y, z] = [name("x"), name("y"), name("z")];
      const [a, b, c] = [client(0, "a"), client(1, "b"), client(2, "c")];
      await a.acquire(x, { owner: "oa" });
      await b.acquire(y, { owner: "ob" });
      const zHeld = await c.acquire(z, { owner: "oc" });
      const aWaits = await queuedAcquire(a, y, "oa");
      const bWaits = await queuedAcquire(b, z, "ob");
      const cWaits = await queuedAcquire(c, x, "oc");
      const err = await deadlockOf(cWaits.lock);
      expect(err.deadlockCycle.map((s) => [s.owner, s.name])).to.deep.equal([
        ["oc", x],
        ["oa", y],
        ["ob", z],
      ]);
      // Nobody else failed: A and B still wait (for several detector looks); B gets z once C lets it
      // go, and A still waits behind B.
      expect(await settledWithin(Promise.race([aWaits.lock, bWaits.lock]), ONE_VICTIM_MS)).to.equal("pending");
      await zHeld.release();
      expect((await bWaits.lock).name).to.equal(z);
      expect(await settledWithin(aWaits.lock, 50)).to.equal("pending");
    });

    it("calls no plain wait or merely slow holder a deadlock, even when the waiter holds another lock", async () => {
      const [x, y] = [name("x"), name("y")];
      const [a, b] = [client(0, "slow"), client(1, "waiter")];
      const xHeld = await a.acquire(x, { owner: "oa" });
      await b.acquire(y, { owner: "ob" });
      const bWaits = await queuedAcquire(b, x, "ob");
      expect(await settledWithin(bWaits.lock, QUIET_MS)).to.equal("pending");
      // It holds and waits, so it was in the registry all along; the grant takes it out.
      expect((await registry()).map((w) => [w.owner, w.name])).to.deep.equal([["ob", x]]);
      await xHeld.release();
      expect((await bWaits.lock).name).to.equal(x);
      expect(await registry()).to.deep.equal([]);
    });

    it("finds a cycle that a grant closes: a waiting owner granted another lock now holds and waits", async () => {
      const [x, y] = [name("x"), name("y")];
      const [a, b, c] = [client(0, "a"), client(1, "b"), client(2, "c")];
      await a.acquire(x, { owner: "oa" });
      const yFirst = await c.acquire(y, { owner: "oc" });
      const bWaitsX = await queuedAcquire(b, x, "ob"); // holds nothing yet: not in the registry
      const bWaitsY = await queuedAcquire(b, y, "ob");
      await yFirst.release();
      expect((await bWaitsY.lock).name).to.equal(y);
      const aWaits = await queuedAcquire(a, y, "oa");
      const err = await deadlockOf(aWaits.lock);
      expect(err.deadlockCycle.map((s) => [s.owner, s.name])).to.deep.equal([
        ["oa", y],
        ["ob", x],
      ]);
      expect(await settledWithin(bWaitsX.lock, ONE_VICTIM_MS)).to.equal("pending");
    });

    it("calls no shared-mode queue behind a slow writer a deadlock", async () => {
      const [rw, p, q] = [name("rw"), name("p"), name("q")];
      const [w, r1, r2] = [client(0, "writer"), client(1, "reader-1"), client(2, "reader-2")];
      const written = await w.readWriteLock(rw).write({ owner: "w" });
      await r1.acquire(p, { owner: "r1" });
      await r2.acquire(q, { owner: "r2" });
      const reads = [r1.readWriteLock(rw).read({ owner: "r1" }), r2.readWriteLock(rw).read({ owner: "r2" })];
      for (const r of reads) r.catch(() => {});
      expect(await settledWithin(Promise.race(reads), QUIET_MS)).to.equal("pending");
      await written.release();
      expect((await Promise.all(reads)).length).to.equal(2);
    });

    it("calls no cycle through a full semaphore a deadlock (a permit holder that does not wait frees it)", async () => {
      const [s, x, y] = [name("s"), name("x"), name("y")];
      const [a, b, c] = [client(0, "a"), client(1, "b"), client(2, "c")];
      await a.semaphore(s, 2).acquire({ owner: "oa" });
      const bPermit = await b.semaphore(s, 2).acquire({ owner: "ob" });
      const yHeld = await c.acquire(y, { owner: "oc" });
      await a.acquire(x, { owner: "oa" });
      // A waits for C's y; C waits for a permit that A or B holds: B can free it, so no deadlock.
      const aWaits = await queuedAcquire(a, y, "oa");
      let cPermit: Promise<Lock> | undefined;
      const cQueued = new Promise<void>((resolve) => {
        cPermit = c.semaphore(s, 2).acquire({ owner: "oc", onQueued: () => resolve() });
      });
      cPermit?.catch(() => {});
      await cQueued;
      const both = Promise.race([aWaits.lock, cPermit]);
      expect(await settledWithin(both, QUIET_MS)).to.equal("pending");
      await bPermit.release();
      await (await cPermit)?.release();
      await yHeld.release();
      expect((await aWaits.lock).name).to.equal(y);
    });

    it("writes nothing to the wait registry for a plain hand-off", async () => {
      const x = name("x");
      const [a, b] = [client(0, "a"), client(1, "b")];
      const calls = countRegistryCalls(d.coordinators);
      const held = await a.acquire(x);
      const waits = await queuedAcquire(b, x, "ob");
      await held.release();
      await (await waits.lock).release();
      expect(calls()).to.equal(0);
      expect(d.coordinators.map((c) => c.table.heldWaits.size)).to.deep.equal(d.coordinators.map(() => 0));
    });
  });
}

/** Counts calls to the coordinators' wait registries from now on; returns the reader of the count. */
function countRegistryCalls(coordinators: Coordinator[]): () => number {
  let count = 0;
  for (const c of coordinators) {
    const waits = c.store.waits;
    for (const method of ["put", "remove", "list"] as const) {
      const inner = waits[method].bind(waits) as (...args: never[]) => Promise<never>;
      (waits as unknown as Record<string, unknown>)[method] = (...args: never[]) => {
        count++;
        return inner(...args);
      };
    }
  }
  return () => count;
}

let redis: TestRedis;
const onRedis = async (count: number): Promise<Deployment> => {
  redis ??= await startRedis();
  const started = await Promise.all(Array.from({ length: count }, () => startCoordinator(redis.url)));
  return {
    addresses: started.map((s) => s.address),
    coordinators: started.map((s) => s.coordinator),
    stop: async () => {
      await Promise.all(started.map((s) => s.stop()));
    },
  };
};

describe("deadlock detection on Redis and on the embedded store", () => {
  deadlockSuite("one coordinator on Redis", () => onRedis(1));
  deadlockSuite("two coordinators on one Redis", () => onRedis(2));
  deadlockSuite("the embedded store", async () => {
    const { coordinator, address } = await startEmbeddedCoordinator();
    return { addresses: [address], coordinators: [coordinator], stop: () => coordinator.stop() };
  });
  after(async () => {
    await redis?.stop();
  });
});
