import { expect } from "chai";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import {
  acquire,
  describeLock,
  GRANTS,
  keys,
  redisNow,
  release,
  revoke,
  subscribeGrants,
  useScripts,
} from "./script-fixture.js";
import { acquireSet } from "./set-fixture.js";

describe("acquire-set.lua", () => {
  const f = useScripts();

  it("returns GRANTED with one token per name, each an ordinary holder of its lock", async () => {
    await acquire(f, "b", { session: "s0" });
    await release(f, "b", { session: "s0" });
    expect(await acquireSet(f, ["a", "b"], { session: "s1", value: "v" })).to.deep.equal([1, ["1", "2"]]);
    expect(await f.redis.hget(keys("a").data, "h:s1:o")).to.equal("1 1 1 s1:set");
    expect(await f.redis.hget(keys("b").data, "h:s1:o")).to.equal("2 1 1 s1:set");
    expect(await f.redis.hget(keys("b").data, "v:s1:o")).to.equal("v");
    expect(await f.redis.zcard(keys("a").queue)).to.equal(0);
  });

  it("returns GRANTED again, the same tokens, when re-run after its grant", async () => {
    await acquireSet(f, ["a", "b"], { session: "s1" });
    expect(await acquireSet(f, ["a", "b"], { session: "s1" })).to.deep.equal([1, ["1", "1"]]);
    expect(await f.redis.hget(keys("a").data, "h:s1:o")).to.equal("1 1 1 s1:set");
  });

  it("returns QUEUED naming the first busy name, with a set-member entry on every name and no hold", async () => {
    await acquire(f, "b", { session: "s0", ttl: 20_000 });
    const [code, index, position, ms] = (await acquireSet(f, ["a", "b", "c"], { session: "s1" })) as number[];
    expect([code, index, position]).to.deep.equal([2, 2, 1]);
    expect(ms).to.be.within(15_000, 20_000);
    for (const name of ["a", "b", "c"]) {
      expect(await f.redis.hget(keys(name).data, "w:s1:set"), name).to.equal("c1 3 0 o");
      expect(await f.redis.hget(keys(name).data, "s:s1:set"), name).to.equal("a\nb\nc");
      expect(await f.redis.zcard(keys(name).holders), name).to.equal(name === "b" ? 1 : 0);
    }
    // A re-run keeps the places.
    expect(((await acquireSet(f, ["a", "b", "c"], { session: "s1" })) as number[]).slice(0, 3)).to.deep.equal([
      2, 2, 1,
    ]);
    expect(await f.redis.zcard(keys("a").queue)).to.equal(1);
  });

  it("returns BUSY naming the busy name when it may not wait, queueing nothing", async () => {
    await acquire(f, "b", { session: "s0" });
    expect(await acquireSet(f, ["a", "b"], { session: "s1", mayWait: false })).to.deep.equal([3, 2]);
    expect(await f.redis.exists(keys("a").queue, keys("b").queue)).to.equal(0);
  });

  it("returns CONFLICT with the SHARED limit in force on the name", async () => {
    await acquire(f, "b", { session: "s0", mode: 2, limit: 3 });
    expect(await acquireSet(f, ["a", "b"], { session: "s1", modes: [1, 2], limits: [0, 2] })).to.deep.equal([
      4,
      2,
      "3",
    ]);
  });

  it("returns HELD when the owner already holds one of the names under another request", async () => {
    await acquire(f, "a", { session: "s1", request: "r0" });
    expect(await acquireSet(f, ["a", "b"], { session: "s1" })).to.deep.equal([6, 1]);
  });

  it("is passed over by hand-on.lua, which returns it with token '' and grants the plain waiter behind", async () => {
    await acquire(f, "a", { session: "s0" });
    await acquire(f, "b", { session: "s9" });
    await acquireSet(f, ["a", "b"], { session: "s1" });
    await acquire(f, "a", { session: "s2", request: "r2" });
    const [, , granted] = (await release(f, "a", { session: "s0" })) as [number, number, string[]];
    expect(granted).to.deep.equal(["s1:set", "", "s2:r2", "2"]);
  });

  it("is told through its coordinator's grant channel when another coordinator's hand-on passes over it", async () => {
    const feed = await subscribeGrants(f.server.url);
    try {
      await acquire(f, "a", { session: "s0" });
      await acquireSet(f, ["a", "b"], { session: "s1", coord: "c2" });
      await release(f, "a", { session: "s0" });
      expect(await feed.next()).to.deep.equal({ channel: `${GRANTS}c2`, message: "s1:set\n\na" });
    } finally {
      feed.close();
    }
  });

  it("lets acquire.lua grant past set-member entries, and describe.lua names the set", async () => {
    await acquire(f, "b", { session: "s0" });
    await acquireSet(f, ["a", "b"], { session: "s1" });
    expect(await acquire(f, "a", { session: "s2" })).to.deep.equal([1, "1", 1]);
    const [, , , waiters] = (await describeLock(f, "a")) as [unknown, unknown, unknown, unknown[]];
    expect(String(waiters[0])).to.equal("s1:set");
    expect(String(waiters[4])).to.equal("a\nb");
  });

  it("keeps each granted hold's lock-delay (d:) as acquire.lua does; a name sent 0 gets none", async () => {
    expect(await acquireSet(f, ["a", "b"], { session: "s1", lockDelays: [5000, 0] })).to.deep.equal([1, ["1", "1"]]);
    expect(await f.redis.hmget(keys("a").data, "d:s1:o", "delay")).to.deep.equal(["5000", null]);
    expect(await f.redis.hexists(keys("b").data, "d:s1:o")).to.equal(0);
    // A clean release of a delayed hold hands on at once.
    expect(await release(f, "a", { session: "s1" })).to.deep.equal([11, 0, []]);
    expect(await acquire(f, "a", { session: "s2", mayWait: false })).to.deep.equal([1, "2", 1]);
  });

  it("delays only the name whose hold ended unclean: revoked from now, expired from its lease's end", async () => {
    await acquireSet(f, ["a", "b", "c"], { session: "s1", ttl: 100, lockDelays: [20_000, 20_000, 20_000] });
    const before = await redisNow(f.redis);
    expect(await revoke(f, "a", { session: "s1" })).to.deep.equal([21, "1", 1, []]);
    expect(Number(await f.redis.hget(keys("a").data, "delay"))).to.be.within(before + 20_000, before + 21_000);
    expect(await release(f, "b", { session: "s1" })).to.deep.equal([11, 0, []]);
    const leaseEnd = Number(await f.redis.zscore(keys("c").holders, "s1:o"));
    await waitForLeaseEnd(f.redis, keys("c").holders, "s1:o");
    // BUSY with the ms left of the delay in force (acquire.lua).
    const [busyA, leftA] = await acquire(f, "a", { session: "s2", mayWait: false });
    expect([busyA, leftA]).to.satisfy(([code, ms]: number[]) => code === 3 && ms > 0 && ms <= 20_000);
    expect(await acquire(f, "b", { session: "s2", mayWait: false })).to.deep.equal([1, "2", 1]);
    const [busyC, leftC] = await acquire(f, "c", { session: "s2", mayWait: false });
    expect([busyC, leftC]).to.satisfy(([code, ms]: number[]) => code === 3 && ms > 0 && ms <= 20_000);
    expect(await f.redis.zscore(keys("c").holders, "delay")).to.equal(String(leaseEnd + 20_000));
    // A set asking for a delayed name queues (or is BUSY) like anyone else.
    expect(await acquireSet(f, ["c", "d"], { session: "s3", mayWait: false })).to.deep.equal([3, 1]);
  });

  it("queued behind a lock-delay, keeps the delayed name's keys from expiring with the delay", async () => {
    await acquire(f, "a", { session: "s0", lockDelay: 20_000 });
    await revoke(f, "a", { session: "s0" });
    expect(await f.redis.pttl(keys("a").holders)).to.be.above(0);
    expect(((await acquireSet(f, ["a", "b"], { session: "s1" })) as number[]).slice(0, 2)).to.deep.equal([2, 1]);
    expect([await f.redis.pttl(keys("a").holders), await f.redis.pttl(keys("a").data)]).to.deep.equal([-1, -1]);
  });

  it("re-run holding some of its names: keeps their tokens and counts, grants the others, never queues behind itself", async () => {
    expect(await acquireSet(f, ["a", "b"], { session: "s1" })).to.deep.equal([1, ["1", "1"]]);
    await revoke(f, "b", { session: "s1" });
    await acquire(f, "b", { session: "s2" });
    const queued = (await acquireSet(f, ["a", "b"], { session: "s1" })) as number[];
    expect(queued.slice(0, 3)).to.deep.equal([2, 2, 1]);
    expect(await f.redis.zcard(keys("a").queue)).to.equal(0);
    expect(await f.redis.zscore(keys("a").leases, "s1:set")).to.equal(null);
    await release(f, "b", { session: "s2" });
    expect(await acquireSet(f, ["a", "b"], { session: "s1" })).to.deep.equal([1, ["1", "3"]]);
    expect(await f.redis.hget(keys("a").data, "h:s1:o")).to.equal("1 1 1 s1:set");
  });
});
