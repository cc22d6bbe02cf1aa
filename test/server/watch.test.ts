import { status } from "@grpc/grpc-js";
import { expect } from "chai";
import { Redis } from "ioredis";
import { HolderChange } from "../../gen/ts/turnstile/v1/turnstile.js";
import { eventChannel } from "../../server/store/redis/records/lock-keys.js";
import { RawSession } from "../harness/raw-session.js";
import { RawWatch } from "../harness/raw-watch.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, proclaimMsg, releaseMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { until } from "../harness/until.js";

describe("Watch", () => {
  let redis: TestRedis;
  let admin: Redis;
  let a: TestCoordinator;
  let b: TestCoordinator;
  const opened: { close(): void }[] = [];
  const session = async (c: TestCoordinator, ttlMs = 60_000) => {
    const s = new RawSession(c.address);
    opened.push(s);
    await s.open(ttlMs);
    return s;
  };
  const watch = (c: TestCoordinator, name: string) => {
    const w = new RawWatch(c.address, name);
    opened.push(w);
    return w;
  };
  const numsub = async (name: string) => {
    const reply = (await admin.call("PUBSUB", "NUMSUB", eventChannel("turnstile", name))) as [string, number];
    return reply[1];
  };

  before(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
    a = await startCoordinator(redis.url);
    b = await startCoordinator(redis.url, { maxWatchBacklog: 20 });
  });
  afterEach(() => {
    for (const o of opened.splice(0)) o.close();
  });
  after(async () => {
    await Promise.all([a.stop(), b.stop()]);
    admin.disconnect();
    await redis.stop();
  });

  it("sends a snapshot first, then every holder change in order, flagging the moment no holder is left", async () => {
    const w = watch(a, "watch/order");
    const first = await w.snapshot();
    expect([first.holders, first.noHolder, first.resync, first.waiterCount]).to.deep.equal([[], true, false, 0]);
    const s1 = await session(a);
    const s2 = await session(a);
    s1.send(acquireMsg("r1", "watch/order", { value: Buffer.from("one") }));
    await s1.next("acquired");
    s2.send(acquireMsg("r2", "watch/order", { value: Buffer.from("two") }));
    await s2.next("queued");
    s1.send(releaseMsg("r3", "watch/order", "r1"));
    const events = [await w.event(), await w.event(), await w.event()];
    expect(events.map((e) => [e.change, e.holder?.owner, e.holdersLeft, e.noHolder])).to.deep.equal([
      [HolderChange.HOLDER_CHANGE_ACQUIRED, "r1", 1, false],
      [HolderChange.HOLDER_CHANGE_RELEASED, "r1", 0, true],
      [HolderChange.HOLDER_CHANGE_ACQUIRED, "r2", 1, false],
    ]);
    expect(events.map((e) => e.holder?.value.toString())).to.deep.equal(["one", "one", "two"]);
    expect(events[1].version).to.equal(events[0].version + 1n);
    expect(events[2].version).to.equal(events[1].version + 1n);
  });

  it("starts a new watcher from a snapshot of the holders, their values and tokens, and the waiter count", async () => {
    const s1 = await session(a);
    const s2 = await session(b);
    s1.send(acquireMsg("r1", "watch/snap", { value: Buffer.from("leader") }));
    const acquired = await s1.next("acquired");
    s2.send(acquireMsg("r2", "watch/snap"));
    await s2.next("queued");
    const snapshot = await watch(b, "watch/snap").snapshot();
    expect(snapshot.holders.map((h) => [h.owner, h.value.toString(), h.fencingToken, h.holdCount])).to.deep.equal([
      ["r1", "leader", acquired.acquired.fencingToken, 1],
    ]);
    expect([snapshot.waiterCount, snapshot.noHolder, snapshot.version > 0n]).to.deep.equal([1, false, true]);
  });

  it("lists in a snapshot each waiter's position, client, wait so far and the holder it waits behind", async () => {
    const s1 = await session(a);
    const s2 = await session(b);
    s1.send(acquireMsg("r1", "watch/waiters"));
    await s1.next("acquired");
    s2.send(acquireMsg("r2", "watch/waiters"));
    await s2.next("queued");
    const snapshot = await watch(b, "watch/waiters").snapshot();
    const [holder] = snapshot.holders;
    expect(holder.clientName).to.equal("test");
    expect(snapshot.waiters.map((w) => [w.position, w.owner, w.clientName])).to.deep.equal([[1, "r2", "test"]]);
    const [w] = snapshot.waiters;
    expect(w.waited).to.not.equal(undefined);
    expect(w.blockedBy.map((x) => [x.sessionId, x.owner, x.fencingToken])).to.deep.equal([
      [holder.sessionId, "r1", holder.fencingToken],
    ]);
    expect(w.blockedBy[0].heldFor).to.deep.equal(holder.heldFor);
  });

  it("shows watchers on two coordinators the same changes in the same order", async () => {
    const onA = watch(a, "watch/two");
    const onB = watch(b, "watch/two");
    await Promise.all([onA.snapshot(), onB.snapshot()]);
    const holders = await Promise.all([session(a), session(b), session(a)]);
    holders[0].send(acquireMsg("r0", "watch/two"));
    await holders[0].next("acquired");
    for (const i of [1, 2]) {
      holders[i].send(acquireMsg(`r${i}`, "watch/two"));
      await holders[i].next("queued");
    }
    for (const [i, s] of holders.entries()) {
      if (i > 0) await s.next("acquired");
      s.send(releaseMsg(`x${i}`, "watch/two", `r${i}`));
    }
    const seen = async (w: RawWatch) => {
      const events = [];
      for (let i = 0; i < 6; i++) events.push(await w.event());
      return events.map((e) => `${e.version} ${e.change} ${e.holder?.owner}`);
    };
    const [fromA, fromB] = await Promise.all([seen(onA), seen(onB)]);
    expect(fromA).to.deep.equal(fromB);
  });

  it("subscribes once per name on a coordinator however many watch it, and unsubscribes after the last", async () => {
    const watchers = [watch(a, "watch/sub"), watch(a, "watch/sub"), watch(a, "watch/sub")];
    await Promise.all(watchers.map((w) => w.snapshot()));
    expect(await numsub("watch/sub")).to.equal(1);
    for (const w of watchers) w.close();
    await until(async () => (await numsub("watch/sub")) === 0, "the unsubscribe");
  });

  it("reports the expiry of a silent holder nobody waits for, within its lease + 1 s", async () => {
    const w = watch(a, "watch/silent");
    await w.snapshot();
    const s = await session(b, 1000);
    s.send(acquireMsg("r1", "watch/silent"));
    await s.next("acquired");
    expect((await w.event()).change).to.equal(HolderChange.HOLDER_CHANGE_ACQUIRED);
    const started = Date.now();
    const expired = await w.event(3000);
    expect([expired.change, expired.noHolder]).to.deep.equal([HolderChange.HOLDER_CHANGE_EXPIRED, true]);
    expect(Date.now() - started).to.be.below(2000);
  });

  it("resynchronises a watcher that stops reading with a fresh snapshot, then goes on in order", async () => {
    const w = watch(b, "watch/slow");
    await w.snapshot();
    const s = await session(b);
    s.send(acquireMsg("r1", "watch/slow"));
    await s.next("acquired");
    w.pause();
    const big = Buffer.alloc(4096, 1);
    for (let i = 0; i < 200; i++) s.send(proclaimMsg(`p${i}`, "watch/slow", "r1", big));
    for (let i = 0; i < 200; i++) await s.next("proclaimed");
    w.resume();
    s.send(proclaimMsg("last", "watch/slow", "r1", "last"));
    // Every change follows the one before, except where a resync snapshot replaces what was missed.
    let version = 0n;
    let resyncs = 0;
    for (let value = ""; value !== "last"; ) {
      const item = await w.next();
      if ("snapshot" in item) {
        expect([item.snapshot.resync, item.snapshot.version > version]).to.deep.equal([true, true]);
        resyncs++;
        version = item.snapshot.version;
        value = item.snapshot.holders[0]?.value.toString() ?? "";
      } else {
        if (version !== 0n) expect(item.event.version).to.equal(version + 1n);
        version = item.event.version;
        value = item.event.holder?.value.toString() ?? "";
      }
    }
    expect(resyncs).to.be.at.least(1);
  });

  it("resynchronises every watcher after the coordinator's event connection to Redis comes back", async () => {
    const w = watch(a, "watch/reconnect");
    await w.snapshot();
    const s = await session(a);
    s.send(acquireMsg("r1", "watch/reconnect"));
    await w.event();
    await admin.call("CLIENT", "KILL", "TYPE", "pubsub");
    const again = await w.snapshot();
    expect([again.resync, again.holders.length]).to.deep.equal([true, 1]);
    s.send(releaseMsg("r2", "watch/reconnect", "r1"));
    expect((await w.event()).version).to.equal(again.version + 1n);
  });

  it("ends the watch with INVALID_ARGUMENT naming the field for a bad name", async () => {
    const end = await watch(a, "").status();
    expect(end.code).to.equal(status.INVALID_ARGUMENT);
    expect(end.details).to.match(/watch\.name: must not be empty/);
  });
});
