import { expect } from "chai";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import { acquire, check, describeLock, keys, redisNow, release, revoke, useScripts } from "./script-fixture.js";

// The lock-delay paths of the scripts (includes/delay.lua), one per way a delay starts, holds, rests and ends.
describe("lock-delay in the scripts (delay.lua)", () => {
  const f = useScripts();
  const k = keys("a");

  /** Lets holder s1:o's short lease end on the Redis clock. */
  async function expireHolder(): Promise<void> {
    await waitForLeaseEnd(f.redis, k.holders, "s1:o");
  }

  it("keeps a hold's delay with it (d:) and a waiter's with the entry (y:) until the grant hands it over", async () => {
    await acquire(f, "a", { session: "s1", lockDelay: 5000 });
    await acquire(f, "a", { session: "s2", lockDelay: 7000 });
    expect(await f.redis.hmget(k.data, "d:s1:o", "y:s2:r")).to.deep.equal(["5000", "7000"]);
    expect(await release(f, "a", { session: "s1" })).to.deep.equal([11, 0, ["s2:r", "2"]]);
    expect(await f.redis.hmget(k.data, "d:s1:o", "d:s2:o", "y:s2:r")).to.deep.equal([null, "7000", null]);
  });

  it("a release hands on at once, delay or not: nothing is delayed", async () => {
    await acquire(f, "a", { session: "s1", lockDelay: 30_000 });
    expect(await release(f, "a", { session: "s1" })).to.deep.equal([11, 0, []]);
    expect(await f.redis.exists(k.holders, k.data)).to.equal(0);
    expect(await acquire(f, "a", { session: "s2", mayWait: false })).to.deep.equal([1, "2", 1]);
  });

  it("an expired hold delays the lock from its lease's end: BUSY to a try-once, QUEUED until the end", async () => {
    await acquire(f, "a", { session: "s1", ttl: 50, lockDelay: 30_000 });
    const leaseEnd = Number(await f.redis.zscore(k.holders, "s1:o"));
    await expireHolder();
    // BUSY carries the delay's ms left, so the refusal can name it (issue 32).
    const [busy, delayLeft] = (await acquire(f, "a", { session: "s2", mayWait: false })) as number[];
    expect(busy).to.equal(3);
    expect(delayLeft).to.be.within(leaseEnd + 30_000 - (await redisNow(f.redis)) - 5, 30_000);
    expect(await f.redis.zscore(k.holders, "delay")).to.equal(String(leaseEnd + 30_000));
    expect(await f.redis.hget(k.data, "delay")).to.equal(String(leaseEnd + 30_000));
    const [code, position, ms] = (await acquire(f, "a", { session: "s3" })) as number[];
    expect([code, position]).to.deep.equal([2, 1]);
    expect(ms).to.be.within(leaseEnd + 30_000 - (await redisNow(f.redis)) - 5, 30_000);
    // A re-check hands nothing on while the delay lasts, and falls due at its end.
    const [recheckMs, granted, statuses] = await check(f, "a", "c1", [["s3:r", "s3:o"]]);
    expect([granted, statuses]).to.deep.equal([[], ["q"]]);
    expect(recheckMs).to.be.within(1, 30_000);
  });

  it("a revoke delays the lock from now and grants the waiter nobody", async () => {
    await acquire(f, "a", { session: "s1", lockDelay: 20_000 });
    await acquire(f, "a", { session: "s2" });
    const before = await redisNow(f.redis);
    expect(await revoke(f, "a", { session: "s1" })).to.deep.equal([21, "1", 1, []]);
    expect(Number(await f.redis.hget(k.data, "delay"))).to.be.within(before + 20_000, before + 21_000);
    const [, , , waiters, delay] = await describeLock(f, "a");
    // One waiter: its id, record, lease left, ms waited, set names and queue score (describe.lua).
    expect((waiters as unknown[]).length).to.equal(6);
    expect(delay).to.be.within(19_000, 20_000);
  });

  it("a delay that has passed is lifted: the re-check at its end grants the head waiter", async () => {
    await acquire(f, "a", { session: "s1", ttl: 50, lockDelay: 100 });
    await acquire(f, "a", { session: "s2" });
    await expireHolder();
    await check(f, "a", "c1", []);
    await waitForLeaseEnd(f.redis, k.holders, "delay");
    const [, granted] = await check(f, "a", "c1", [["s2:r", "s2:o"]]);
    expect(granted).to.deep.equal(["s2:r", "2"]);
    expect(await f.redis.hexists(k.data, "delay")).to.equal(0);
    expect(await f.redis.pttl(k.holders)).to.equal(-1);
  });

  it("never shortens a later delay, and never starts one that has already passed", async () => {
    await acquire(f, "a", { session: "s1", owner: "x", lockDelay: 20_000, mode: 2, limit: 0 });
    await acquire(f, "a", { session: "s1", owner: "y", lockDelay: 1000, mode: 2, limit: 0 });
    await revoke(f, "a", { session: "s1", owner: "x" });
    const end = await f.redis.zscore(k.holders, "delay");
    await revoke(f, "a", { session: "s1", owner: "y" });
    expect(await f.redis.zscore(k.holders, "delay")).to.equal(end);
    await f.redis.del(k.holders, k.data);
    await acquire(f, "a", { session: "s2", ttl: 50, lockDelay: 1 });
    // The clock is past the lease's end, so at or past the end of its 1 ms delay.
    await waitForLeaseEnd(f.redis, k.holders, "s2:o");
    expect((await acquire(f, "a", { session: "s3", mayWait: false }))[0]).to.equal(1);
  });

  it("lets a delayed lock's keys expire with the delay while it has nothing else, and keeps them once a waiter joins", async () => {
    await acquire(f, "a", { session: "s1", lockDelay: 20_000 });
    await revoke(f, "a", { session: "s1" });
    const end = Number(await f.redis.hget(k.data, "delay"));
    expect(await f.redis.pexpiretime(k.holders)).to.equal(end);
    expect(await f.redis.pexpiretime(k.data)).to.equal(end);
    await acquire(f, "a", { session: "s2" });
    expect([await f.redis.pttl(k.holders), await f.redis.pttl(k.data)]).to.deep.equal([-1, -1]);
    // The waiter withdraws: the delay is all that is left again.
    expect(await release(f, "a", { session: "s2", request: "r" })).to.deep.equal([13, 0, []]);
    expect(await f.redis.pexpiretime(k.holders)).to.equal(end);
  });
});
