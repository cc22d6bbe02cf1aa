import { expect } from "chai";
import { type Leader, type ReleaseRequest, TurnstileClient, TurnstileError } from "../../client/index.js";
import { EventWaiters } from "../harness/event-waiters.js";
import { LeaderLog } from "../harness/leader-log.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

const text = (leader: Leader | null | undefined) => (leader ? Buffer.from(leader.value).toString() : leader);

/** The TypeScript client's hand-over API (docs/elections.md) against two coordinators on one Redis. */
describe("TypeScript client: transfer, release requests, priority, hand-over", () => {
  let redis: TestRedis;
  let a: TestCoordinator;
  let b: TestCoordinator;
  const clients: TurnstileClient[] = [];
  const logs: LeaderLog[] = [];
  const client = (address: string) => {
    const c = new TurnstileClient(address, { ttlMs: 10_000 });
    clients.push(c);
    return c;
  };

  before(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([startCoordinator(redis.url), startCoordinator(redis.url)]);
  });
  afterEach(async () => {
    await Promise.all(logs.splice(0).map((l) => l.stop()));
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  });
  after(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await redis.stop();
  });

  it("Lock.transfer hands the lock to the named waiter on another coordinator with a higher token", async () => {
    const holderClient = client(a.address);
    const held = await holderClient.acquire("t/a");
    const successorClient = client(b.address);
    const next = successorClient.acquire("t/a", { owner: "next" });
    await waitForQueue(redis.url, "t/a", 1);
    const successor = await held.transfer({ sessionId: successorClient.sessionId, owner: "next" });
    const granted = await next;
    expect(successor).to.deep.equal({
      sessionId: successorClient.sessionId,
      owner: "next",
      fencingToken: granted.fencingToken,
    });
    expect(granted.fencingToken > held.fencingToken).to.equal(true);
    // The old handle ended as released (an AbortError), not lost.
    expect([held.signal.aborted, held.lost, (held.signal.reason as DOMException).name]).to.deep.equal([
      true,
      false,
      "AbortError",
    ]);
    await held.release(); // a no-op now
    await granted.release();
  });

  it("Lock.transfer to a session that does not wait rejects 'not-found' naming who does; the lock stays held", async () => {
    const held = await client(a.address).acquire("t/b");
    const waiterClient = client(b.address);
    const waiting = waiterClient.acquire("t/b", { owner: "w" });
    await waitForQueue(redis.url, "t/b", 1);
    const refused = await held.transfer("0123456789abcdef0123456789abcdef").catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(TurnstileError);
    expect((refused as TurnstileError).reason).to.equal("not-found");
    expect((refused as TurnstileError).message).to.include(`waiting: session "${waiterClient.sessionId}" owner "w"`);
    expect([held.signal.aborted, held.leaseRemainingMs > 0]).to.deep.equal([false, true]);
    await held.transfer(); // the head of the queue
    await (await waiting).release();
  });

  it("Lock.releaseRequested aborts with the request and the client emits releaseRequested; nothing is enforced", async () => {
    const holderClient = client(a.address);
    const held = await holderClient.acquire("t/c", { owner: "h" });
    const events: ReleaseRequest[] = [];
    const waiters = new EventWaiters();
    holderClient.on("releaseRequested", (r) => {
      events.push(r);
      waiters.notify();
    });
    const asker = client(b.address);
    expect(await asker.requestRelease("t/c", { reason: "deploy" })).to.equal(1);
    await waiters.until(
      () => events.length === 1,
      5000,
      () => "the releaseRequested event",
    );
    const expected = { name: "t/c", owner: "h", requester: `session ${asker.sessionId}`, reason: "deploy" };
    expect(events[0]).to.deep.equal({ ...expected, sessionId: asker.sessionId });
    expect(held.releaseRequested.aborted).to.equal(true);
    expect(held.releaseRequested.reason).to.deep.equal(events[0]);
    expect([held.signal.aborted, held.leaseRemainingMs > 0]).to.deep.equal([false, true]);
    const nobody = await asker.requestRelease("t/none").catch((e: unknown) => e);
    expect((nobody as TurnstileError).reason).to.equal("not-found");
    await held.release();
  });

  it("priority: a waiter of higher priority is granted first, FIFO within one priority", async () => {
    const held = await client(a.address).acquire("t/d");
    const order: string[] = [];
    const take = (who: string, priority: number) =>
      client(b.address)
        .acquire("t/d", { priority })
        .then(async (lock) => {
          order.push(who);
          await lock.release();
        });
    const low = take("low", 0);
    await waitForQueue(redis.url, "t/d", 1);
    const high1 = take("high1", 5);
    await waitForQueue(redis.url, "t/d", 2);
    const high2 = take("high2", 5);
    await waitForQueue(redis.url, "t/d", 3);
    const top = take("top", 9);
    await waitForQueue(redis.url, "t/d", 4);
    await held.release();
    await Promise.all([low, high1, high2, top]);
    expect(order).to.deep.equal(["top", "high1", "high2", "low"]);
    const bad = await client(a.address)
      .acquire("t/d", { priority: 101 })
      .catch((e: unknown) => e);
    expect((bad as TurnstileError).message).to.equal(
      '"t/d": acquire.priority: 101 is outside the allowed range 0..100',
    );
  });

  it("the recipe: a new candidate campaigns at a higher priority and asks to yield; the leader hands over; observers never see no leader", async () => {
    const observer = new LeaderLog(client(b.address).election("t/e"));
    logs.push(observer);
    const old = await client(a.address).election("t/e").campaign("old");
    await observer.until(() => text(observer.current) === "old", "the old leader");
    const other = client(a.address).election("t/e").campaign("other"); // an old pod, queued first
    await waitForQueue(redis.url, "t/e", 1);
    const asked = new Promise<ReleaseRequest>((resolve) =>
      old.releaseRequested.addEventListener("abort", () => resolve(old.releaseRequested.reason), { once: true }),
    );
    const fresh = client(b.address).election("t/e").campaign("new", { priority: 10, askToYield: "new version" });
    const request = await asked;
    expect(request.reason).to.equal("new version");
    const successor = await old.handOver(request.sessionId);
    const leader = await fresh;
    expect(successor.fencingToken).to.equal(leader.fencingToken);
    expect(leader.fencingToken > old.fencingToken).to.equal(true);
    await observer.until(() => text(observer.current) === "new", "the new leader");
    // From the old leader on: straight to the new one, never a report of no leader.
    const seen = observer.seen.map(text);
    expect(seen.slice(seen.indexOf("old"))).to.deep.equal(["old", "new"]);
    await leader.resign();
    await (await other).resign();
  });
});
