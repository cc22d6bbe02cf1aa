import { expect } from "chai";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireAllMsg, acquireMsg, releaseMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

// The AcquireAll protocol on the wire, over two coordinators sharing one Redis.
describe("AcquireAll (protocol)", () => {
  let redis: TestRedis;
  let one: TestCoordinator;
  let two: TestCoordinator;
  const sessions: RawSession[] = [];
  const open = async (coord: TestCoordinator) => {
    const s = new RawSession(coord.address);
    sessions.push(s);
    await s.open(10_000);
    return s;
  };

  before(async () => {
    redis = await startRedis();
    [one, two] = [await startCoordinator(redis.url), await startCoordinator(redis.url)];
  });
  afterEach(() => {
    for (const s of sessions.splice(0)) s.close();
  });
  after(async () => {
    await one.stop();
    await two.stop();
    await redis.stop();
  });

  it("answers Queued once, naming the first lock it waits for, then AcquiredAll in request order", async () => {
    const holder = await open(one);
    holder.send(acquireMsg("h1", "proto/b", { owner: "h" }));
    holder.send(acquireMsg("h2", "proto/c", { owner: "h" }));
    await holder.next("acquired", (a) => a.acquired.requestId === "h2");
    const waiter = await open(one);
    waiter.send(acquireAllMsg("set", ["proto/a", "proto/b", "proto/c"]));
    const queued = await waiter.next("queued");
    expect([queued.queued.requestId, queued.queued.name, queued.queued.position]).to.deep.equal(["set", "proto/b", 1]);
    holder.send(releaseMsg("r1", "proto/b", "h"));
    await holder.next("released");
    holder.send(releaseMsg("r2", "proto/c", "h"));
    const { acquiredAll } = await waiter.next("acquiredAll");
    expect(acquiredAll.requestId).to.equal("set");
    expect(acquiredAll.locks.map((l) => [l.requestId, l.name, l.holdCount])).to.deep.equal([
      ["set", "proto/a", 1],
      ["set", "proto/b", 1],
      ["set", "proto/c", 1],
    ]);
    expect(waiter.received.filter((r) => r.kind?.$case === "queued")).to.deep.equal([]);
    // Each name is an ordinary hold of the set's owner: released one by one.
    waiter.send(releaseMsg("r3", "proto/b", "o"));
    expect((await waiter.next("released")).released).to.include({ name: "proto/b", holdCount: 0 });
  });

  it("is granted when a release on another coordinator frees its last busy name (the hand-on tells its coordinator)", async () => {
    const holder = await open(two);
    holder.send(acquireMsg("h1", "far/b", { owner: "h" }));
    await holder.next("acquired");
    const waiter = await open(one);
    waiter.send(acquireAllMsg("set", ["far/a", "far/b"]));
    await waiter.next("queued");
    holder.send(releaseMsg("r1", "far/b", "h"));
    const { acquiredAll } = await waiter.next("acquiredAll");
    expect(acquiredAll.locks.map((l) => l.name)).to.deep.equal(["far/a", "far/b"]);
  });

  it("refuses an owner that already holds one of the names, naming the field, and leaves the session working", async () => {
    const s = await open(one);
    s.send(acquireMsg("a1", "mine/b", { owner: "o" }));
    await s.next("acquired");
    s.send(acquireAllMsg("set", ["mine/a", "mine/b"]));
    const { failed } = await s.next("failed");
    expect(failed.message).to.equal(
      'acquire_all.locks[1].name: owner "o" already holds "mine/b" in this session (a set takes only names it does not hold)',
    );
    s.send(acquireAllMsg("set2", ["mine/a", "mine/c"]));
    expect((await s.next("acquiredAll")).acquiredAll.locks).to.have.length(2);
  });
});
