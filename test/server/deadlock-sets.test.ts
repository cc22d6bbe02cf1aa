import { expect } from "chai";
import { type LockSet, TurnstileClient, TurnstileError } from "../../client/index.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

/** The documented detection bound (docs/deadlocks.md) with room for a loaded test machine. */
const FOUND_WITHIN_MS = 2500;

/** The error `p` rejects with within the bound; fails the test when it settles otherwise or not at all. */
async function rejectionWithin(p: Promise<unknown>, ms: number): Promise<TurnstileError> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([p, late]);
  } catch (err) {
    if (err instanceof TurnstileError) return err;
    throw err;
  } finally {
    clearTimeout(timer);
  }
  throw new Error("resolved instead of failing");
}

// A set's owner may hold other locks while the set waits: then the set is a hold-and-wait like any
// acquire, and a cycle through it is found (its wait on each name is an AND-edge).
describe("deadlocks through a waiting set (acquireAll by an owner that holds another lock)", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  const clients: TurnstileClient[] = [];
  const client = () => {
    const c = new TurnstileClient(coord.address, { ttlMs: 10_000 });
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

  /** A holds x and B holds y, each under one owner. */
  async function holding() {
    const [a, b] = [client(), client()];
    await a.acquire("dl-set/x", { owner: "oa" });
    await b.acquire("dl-set/y", { owner: "ob" });
    return { a, b };
  }

  it("fails the set with DEADLOCK when it is the youngest wait of the cycle, naming the cycle", async () => {
    const { a, b } = await holding();
    let queued!: () => void;
    const isQueued = new Promise<void>((resolve) => {
      queued = resolve;
    });
    const single = b.acquire("dl-set/x", { owner: "ob", onQueued: () => queued() });
    await isQueued;
    const set = a.acquireAll(["dl-set/y", "dl-set/z"], { owner: "oa" });
    const error = await rejectionWithin(set, FOUND_WITHIN_MS);
    expect(error.reason).to.equal("deadlock");
    expect(error.deadlockCycle.map((s) => [s.owner, s.name])).to.deep.equal([
      ["oa", "dl-set/y"],
      ["ob", "dl-set/x"],
    ]);
    // The victim withdrew from every name; the other wait goes on and gets x once A lets it go.
    const z = await a.acquire("dl-set/z", { owner: "other", waitMs: 0 });
    await z.release();
    await a.close();
    await (await single).release();
  });

  it("fails the other wait when the set is older, and the set is granted once the victim's lock is released", async () => {
    const { a, b } = await holding();
    let queued!: () => void;
    const isQueued = new Promise<void>((resolve) => {
      queued = resolve;
    });
    const set: Promise<LockSet> = a.acquireAll(["dl-set/y", "dl-set/z"], { owner: "oa", onQueued: () => queued() });
    await isQueued;
    const single = b.acquire("dl-set/x", { owner: "ob" });
    const error = await rejectionWithin(single, FOUND_WITHIN_MS);
    expect(error.reason).to.equal("deadlock");
    await b.close();
    const held = await set;
    expect(held.locks.map((l) => l.name)).to.deep.equal(["dl-set/y", "dl-set/z"]);
  });
});
