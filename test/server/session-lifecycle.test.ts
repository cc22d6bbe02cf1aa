import { expect } from "chai";
import { FailureReason, LockMode, LostReason } from "../../gen/ts/turnstile/v1/turnstile.js";
import { msFromDuration } from "../../wire/duration.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, cancelMsg, closeMsg, keepAliveMsg, releaseMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

describe("session lifecycle (server side)", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  const open: RawSession[] = [];
  const session = async (ttlMs = 60_000) => {
    const s = new RawSession(coord.address);
    open.push(s);
    await s.open(ttlMs);
    return s;
  };
  const failure = async (s: RawSession, id: string) =>
    (await s.next("failed", (f) => f.failed.requestId === id)).failed;

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  after(async () => {
    await coord.stop();
    await redis.stop();
  });

  it("hands off in FIFO order by push, with no timed re-check", async () => {
    const holder = await session();
    holder.send(acquireMsg("h", "life/fifo"));
    await holder.next("acquired");
    const waiters = await Promise.all([1, 2, 3, 4, 5].map(() => session()));
    for (const [i, w] of waiters.entries()) {
      w.send(acquireMsg(`w${i}`, "life/fifo"));
      expect((await w.next("queued")).queued.position).to.equal(i + 1);
    }
    const rechecksBefore = coord.coordinator.table.recheckCount;
    holder.send(releaseMsg("r", "life/fifo", "h"));
    let previous = 0n;
    for (const [i, w] of waiters.entries()) {
      const granted = (await w.next("acquired")).acquired;
      expect(granted.fencingToken > previous).to.equal(true);
      previous = granted.fencingToken;
      for (const later of waiters.slice(i + 1))
        expect(later.received.some((r) => r.kind?.$case === "acquired")).to.equal(false);
      w.send(releaseMsg("r", "life/fifo", `w${i}`));
    }
    expect(coord.coordinator.table.recheckCount).to.equal(rechecksBefore);
  });

  it("re-enters with the same owner: the hold count rises and the token stays", async () => {
    const s = await session();
    s.send(acquireMsg("r1", "life/reentry", { owner: "me" }));
    const first = (await s.next("acquired")).acquired;
    s.send(acquireMsg("r2", "life/reentry", { owner: "me" }));
    const second = (await s.next("acquired")).acquired;
    expect([second.fencingToken, second.holdCount]).to.deep.equal([first.fencingToken, 2]);
    s.send(releaseMsg("r3", "life/reentry", "me"));
    expect((await s.next("released")).released.holdCount).to.equal(1);
    const other = await session();
    other.send(acquireMsg("o1", "life/reentry", { waitMs: 0 }));
    expect((await failure(other, "o1")).reason).to.equal(FailureReason.FAILURE_REASON_BUSY);
    s.send(releaseMsg("r4", "life/reentry", "me"));
    expect((await s.next("released")).released.holdCount).to.equal(0);
  });

  it("answers a cancelled waiter with CANCELLED and grants the next waiter instead", async () => {
    const [holder, cancelled, next] = [await session(), await session(), await session()];
    holder.send(acquireMsg("h", "life/cancel"));
    await holder.next("acquired");
    cancelled.send(acquireMsg("c", "life/cancel"));
    await cancelled.next("queued");
    next.send(acquireMsg("n", "life/cancel"));
    await next.next("queued");
    cancelled.send(cancelMsg("c"));
    expect((await failure(cancelled, "c")).reason).to.equal(FailureReason.FAILURE_REASON_CANCELLED);
    holder.send(releaseMsg("r", "life/cancel", "h"));
    await next.next("acquired");
  });

  it("fails a waiter with TIMEOUT naming the holder it waited behind, and leaves no queue entry behind", async () => {
    const holder = new RawSession(coord.address);
    open.push(holder);
    const { sessionId } = await holder.open(60_000);
    const waiter = await session();
    holder.send(acquireMsg("h", "life/timeout"));
    const { fencingToken } = (await holder.next("acquired")).acquired;
    waiter.send(acquireMsg("w", "life/timeout", { waitMs: 200 }));
    await waiter.next("queued");
    const f = await failure(waiter, "w");
    expect(f.reason).to.equal(FailureReason.FAILURE_REASON_TIMEOUT);
    expect(f.message).to.match(
      /^acquire\.wait: 200 ms ran out; waited behind "h" of session [0-9a-f]+ \(held \d+ ms\)$/,
    );
    expect(f.blockedBy.map(({ heldFor, ...b }) => b)).to.deep.equal([
      {
        sessionId,
        owner: "h",
        clientName: "test",
        identity: "",
        fencingToken,
        mode: LockMode.LOCK_MODE_EXCLUSIVE,
        name: "",
      },
    ]);
    expect(msFromDuration(f.blockedBy[0].heldFor ?? { seconds: 0n, nanos: 0 })).to.be.at.least(200);
    const third = await session();
    third.send(acquireMsg("t", "life/timeout"));
    expect((await third.next("queued")).queued.position).to.equal(1);
  });

  it("releases everything at Close, ends the stream with OK, and hands the locks on", async () => {
    const [s, waiter] = [await session(), await session()];
    s.send(acquireMsg("a", "life/close/1"));
    s.send(acquireMsg("b", "life/close/2"));
    await s.next("acquired", (a) => a.acquired.requestId === "b");
    waiter.send(acquireMsg("w1", "life/close/1"));
    waiter.send(acquireMsg("w2", "life/close/2"));
    await waiter.next("queued", (q) => q.queued.requestId === "w2");
    s.send(closeMsg());
    expect((await s.status()).code).to.equal(0);
    await waiter.next("acquired", (a) => a.acquired.requestId === "w1");
    await waiter.next("acquired", (a) => a.acquired.requestId === "w2");
  });

  it("keeps the holds of a reset stream until the lease ends, and withdraws its waiters at once", async () => {
    const reset = await session(1000);
    const other = await session();
    other.send(acquireMsg("o", "life/reset/held-by-other"));
    await other.next("acquired");
    reset.send(acquireMsg("h", "life/reset/held"));
    await reset.next("acquired");
    reset.send(acquireMsg("w", "life/reset/held-by-other"));
    await reset.next("queued");
    reset.close();
    const next = await session();
    next.send(acquireMsg("n", "life/reset/held-by-other"));
    expect((await next.next("queued")).queued.position).to.equal(1);
    const later = await session();
    later.send(acquireMsg("l", "life/reset/held", { waitMs: 0 }));
    expect((await failure(later, "l")).reason).to.equal(FailureReason.FAILURE_REASON_BUSY);
    later.send(acquireMsg("l2", "life/reset/held"));
    await later.next("acquired", () => true, 3000);
  });

  it("acks a keepalive after renewing, and reports an expired hold as Lost before the ack", async () => {
    const s = await session(1000);
    s.send(acquireMsg("h", "life/keepalive"));
    const held = (await s.next("acquired")).acquired;
    s.send(keepAliveMsg(1));
    expect((await s.next("keepAliveAck")).keepAliveAck.seq).to.equal(1n);
    const thief = await session();
    thief.send(acquireMsg("t", "life/keepalive"));
    await thief.next("acquired", () => true, 3000);
    s.send(keepAliveMsg(2));
    await s.next("keepAliveAck", (a) => a.keepAliveAck.seq === 2n);
    // Taken after the ack: Lost must already have arrived by then.
    const lost = s.received.find((r) => r.kind?.$case === "lost")?.kind;
    expect(lost?.$case === "lost" && [lost.lost.name, lost.lost.fencingToken, lost.lost.reason]).to.deep.equal([
      "life/keepalive",
      held.fencingToken,
      LostReason.LOST_REASON_EXPIRED,
    ]);
  });
});
