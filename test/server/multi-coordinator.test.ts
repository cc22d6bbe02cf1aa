import { expect } from "chai";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, releaseMsg } from "../harness/requests.js";

describe("two coordinator processes on one Redis", () => {
  let redis: TestRedis;
  let a: CoordinatorProcess;
  let b: CoordinatorProcess;
  const open: RawSession[] = [];
  const session = async (c: CoordinatorProcess, ttlMs = 60_000) => {
    const s = new RawSession(c.address);
    open.push(s);
    await s.open(ttlMs);
    return s;
  };

  before(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([spawnCoordinator(redis.url), spawnCoordinator(redis.url)]);
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  after(async () => {
    await Promise.all([a.kill(), b.kill()]);
    await redis.stop();
  });

  it("grants a waiter on B by push when the holder on A releases (the holder's lease is a minute away)", async () => {
    const onA = await session(a);
    const onB = await session(b);
    onA.send(acquireMsg("a1", "multi/handoff"));
    const first = await onA.next("acquired");
    onB.send(acquireMsg("b1", "multi/handoff"));
    await onB.next("queued");
    onA.send(releaseMsg("a2", "multi/handoff", "a1"));
    // With a 60 s lease nothing but the published grant can wake B within this 2 s window.
    const granted = await onB.next("acquired", () => true, 2000);
    expect(granted.acquired.fencingToken).to.equal(first.acquired.fencingToken + 1n);
  });

  it("grants the waiter on B once the silent holder's lease on A ends, with a greater token", async () => {
    const onA = await session(a, 1000);
    const onB = await session(b);
    onA.send(acquireMsg("a1", "multi/expiry"));
    const first = await onA.next("acquired");
    onB.send(acquireMsg("b1", "multi/expiry"));
    await onB.next("queued");
    // A sends no keepalive: its 1 s lease ends in Redis and B's re-check at the deadline grants B.
    const granted = await onB.next("acquired", () => true, 2000);
    expect(granted.acquired.fencingToken > first.acquired.fencingToken).to.equal(true);
  });

  it("keeps fencing tokens increasing across a coordinator restart", async () => {
    const before = await session(a);
    before.send(acquireMsg("a1", "multi/restart"));
    const first = await before.next("acquired");
    before.send(releaseMsg("a2", "multi/restart", "a1"));
    await before.next("released");
    await a.kill();
    a = await spawnCoordinator(redis.url);
    const after = await session(a);
    after.send(acquireMsg("a1", "multi/restart"));
    const second = await after.next("acquired");
    expect(second.acquired.fencingToken > first.acquired.fencingToken).to.equal(true);
  });
});
