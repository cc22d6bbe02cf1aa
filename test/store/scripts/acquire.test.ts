import { expect } from "chai";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import { acquire, keys, LONG_TTL, RETAIN_MS, redisNow, release, revoke, useScripts } from "./script-fixture.js";

describe("acquire.lua", () => {
  const f = useScripts();

  it("returns GRANTED with token 1 and count 1 on a free lock, and records the holder", async () => {
    const before = await redisNow(f.redis);
    expect(await acquire(f, "a", { session: "s1", request: "r1", ttl: 10_000 })).to.deep.equal([1, "1", 1]);
    const k = keys("a");
    const deadline = Number(await f.redis.zscore(k.holders, "s1:o"));
    expect(deadline).to.be.within(before + 10_000, (await redisNow(f.redis)) + 10_000);
    expect(await f.redis.hget(k.data, "h:s1:o")).to.equal("1 1 1 s1:r1");
    expect(await f.redis.hget(k.data, "excl")).to.equal("1");
    // Kept retain ms past the lease: a lock held longer than retain keeps its counter.
    expect(await f.redis.pttl(k.fence)).to.be.within(10_000 + RETAIN_MS - 5_000, 10_000 + RETAIN_MS);
  });

  it("returns GRANTED with the same token and count 2 when the same session and owner re-enter", async () => {
    await acquire(f, "a", { session: "s1", request: "r1" });
    expect(await acquire(f, "a", { session: "s1", request: "r2" })).to.deep.equal([1, "1", 2]);
    expect(await f.redis.get(keys("a").fence)).to.equal("1");
    expect(await f.redis.hget(keys("a").data, "h:s1:o")).to.equal("1 2 1 s1:r1");
  });

  describe("a re-sent re-entry (same session and request id)", () => {
    it("answers GRANTED with the same token and count, counting nothing again", async () => {
      await acquire(f, "a", { session: "s1", request: "r1" });
      expect(await acquire(f, "a", { session: "s1", request: "r2" })).to.deep.equal([1, "1", 2]);
      expect(await f.redis.hget(keys("a").data, "r:s1:o")).to.equal("1 s1:r2");
      expect(await acquire(f, "a", { session: "s1", request: "r2" })).to.deep.equal([1, "1", 2]);
      expect(await f.redis.hget(keys("a").data, "h:s1:o")).to.equal("1 2 1 s1:r1");
    });

    it("counts a re-entry with another request id, and a re-run of an older one again (only the latest is kept)", async () => {
      await acquire(f, "a", { session: "s1", request: "r1" });
      await acquire(f, "a", { session: "s1", request: "r2" });
      expect(await acquire(f, "a", { session: "s1", request: "r3" })).to.deep.equal([1, "1", 3]);
      expect(await f.redis.hget(keys("a").data, "r:s1:o")).to.equal("1 s1:r3");
      // Over-counting, never under: r2 is no longer the latest re-entry.
      expect(await acquire(f, "a", { session: "s1", request: "r2" })).to.deep.equal([1, "1", 4]);
    });

    it("counts again when the remembered re-entry belongs to an earlier hold (another token)", async () => {
      await acquire(f, "a", { session: "s1", request: "r1" });
      // As a version-6 coordinator could leave it: a re-entry of an earlier hold (token 0) named r2.
      await f.redis.hset(keys("a").data, "r:s1:o", "0 s1:r2");
      expect(await acquire(f, "a", { session: "s1", request: "r2" })).to.deep.equal([1, "1", 2]);
    });

    /** s1 holds "a" twice (grant r1, re-entry r2) for ttl ms; s2 waits, so the data hash outlives s1's hold. */
    async function reenteredWithWaiter(ttl = LONG_TTL) {
      await acquire(f, "a", { session: "s1", request: "r1", ttl });
      await acquire(f, "a", { session: "s1", request: "r2", ttl });
      await acquire(f, "a", { session: "s2", request: "w", ttl: LONG_TTL });
      expect(await f.redis.hget(keys("a").data, "r:s1:o")).to.equal("1 s1:r2");
    }

    it("is kept while the hold lasts and removed with it when released", async () => {
      await reenteredWithWaiter();
      expect((await release(f, "a", { session: "s1" })).slice(0, 2)).to.deep.equal([11, 1]);
      expect(await f.redis.hget(keys("a").data, "r:s1:o")).to.equal("1 s1:r2");
      await release(f, "a", { session: "s1" });
      expect(await f.redis.hexists(keys("a").data, "r:s1:o")).to.equal(0);
      expect(await f.redis.hget(keys("a").data, "h:s2:o")).to.equal("2 1 1 s2:w");
    });

    it("is removed with its hold when the hold expires (purge)", async () => {
      await reenteredWithWaiter(80);
      await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
      expect((await acquire(f, "a", { session: "s3", request: "x" }))[0]).to.equal(2);
      expect(await f.redis.hexists(keys("a").data, "h:s1:o")).to.equal(0);
      expect(await f.redis.hexists(keys("a").data, "r:s1:o")).to.equal(0);
    });

    it("is removed with its hold when the hold is revoked", async () => {
      await reenteredWithWaiter();
      expect((await revoke(f, "a", { session: "s1" }))[0]).to.equal(21);
      expect(await f.redis.hexists(keys("a").data, "r:s1:o")).to.equal(0);
      expect(await f.redis.hget(keys("a").data, "h:s2:o")).to.equal("2 1 1 s2:w");
    });
  });

  it("returns QUEUED with the position and the ms until the holder's lease ends", async () => {
    await acquire(f, "a", { session: "s1", ttl: 10_000 });
    const deadline = Number(await f.redis.zscore(keys("a").holders, "s1:o"));
    const first = await acquire(f, "a", { session: "s2", request: "r2" });
    const after = await redisNow(f.redis);
    expect(first.slice(0, 2)).to.deep.equal([2, 1]);
    expect(first[2])
      .to.be.a("number")
      .within(deadline - after, 10_000);
    expect((await acquire(f, "a", { session: "s3", request: "r3" })).slice(0, 2)).to.deep.equal([2, 2]);
    expect(await f.redis.zrange(keys("a").queue, 0, "-1")).to.deep.equal(["s2:r2", "s3:r3"]);
    expect(await f.redis.hget(keys("a").data, "w:s2:r2")).to.equal("c1 1 0 o");
  });

  it("answers a re-sent request still queued with QUEUED at its old place, re-attached to the caller", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", coord: "c1" });
    await acquire(f, "a", { session: "s3" });
    const reply = await acquire(f, "a", { session: "s2", coord: "c2", ttl: 50_000 });
    expect(reply.slice(0, 2)).to.deep.equal([2, 1]);
    expect(await f.redis.hget(keys("a").data, "w:s2:r")).to.equal("c2 1 0 o");
    expect(await f.redis.zrange(keys("a").queue, 0, "-1")).to.deep.equal(["s2:r", "s3:r"]);
    expect(Number(await f.redis.zscore(keys("a").leases, "s2:r"))).to.be.above((await redisNow(f.redis)) + 40_000);
  });

  it("answers a re-sent request already granted with GRANTED, the same token and count, and a renewed lease", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", ttl: 1_000 });
    await release(f, "a", { session: "s1" });
    expect(await acquire(f, "a", { session: "s2", ttl: 50_000 })).to.deep.equal([1, "2", 1]);
    expect(await f.redis.hget(keys("a").data, "h:s2:o")).to.equal("2 1 1 s2:r");
    expect(Number(await f.redis.zscore(keys("a").holders, "s2:o"))).to.be.above((await redisNow(f.redis)) + 40_000);
  });

  it("returns BUSY when it may not wait, and leaves no queue entry", async () => {
    await acquire(f, "a", { session: "s1" });
    expect(await acquire(f, "a", { session: "s2", mayWait: false })).to.deep.equal([3]);
    expect(await f.redis.zcard(keys("a").queue)).to.equal(0);
    expect(await f.redis.zcard(keys("a").leases)).to.equal(0);
  });

  it("returns CONFLICT with the limit in force when a shared claim names another limit", async () => {
    await acquire(f, "a", { session: "s1", mode: 2, limit: 2 });
    expect(await acquire(f, "a", { session: "s2", mode: 2, limit: 3 })).to.deep.equal([4, "2"]);
    expect(await f.redis.zcard(keys("a").holders)).to.equal(1);
  });

  it("returns UPGRADE when a shared holder asks for the lock exclusively, and keeps its hold", async () => {
    await acquire(f, "a", { session: "s1", request: "r1", mode: 2, limit: 0 });
    expect(await acquire(f, "a", { session: "s1", request: "r2", mode: 1 })).to.deep.equal([5]);
    expect(await f.redis.hget(keys("a").data, "h:s1:o")).to.equal("1 1 2 s1:r1");
  });

  it("returns CONFLICT when a shared holder re-enters naming another limit, and keeps its count", async () => {
    await acquire(f, "a", { session: "s1", request: "r1", mode: 2, limit: 2 });
    expect(await acquire(f, "a", { session: "s1", request: "r2", mode: 2, limit: 3 })).to.deep.equal([4, "2"]);
    expect(await f.redis.hget(keys("a").data, "h:s1:o")).to.equal("1 1 2 s1:r1");
  });

  it("returns GRANTED as a re-entry when an exclusive holder asks shared: same token, still exclusive", async () => {
    await acquire(f, "a", { session: "s1", request: "r1", mode: 1 });
    expect(await acquire(f, "a", { session: "s1", request: "r2", mode: 2, limit: 0 })).to.deep.equal([1, "1", 2]);
    expect(await f.redis.hget(keys("a").data, "h:s1:o")).to.equal("1 2 1 s1:r1");
    expect(await f.redis.hget(keys("a").data, "excl")).to.equal("1");
  });

  it("grants shared claims up to the limit, each with a new token, and queues the next", async () => {
    const shared = { mode: 2, limit: 2 } as const;
    expect(await acquire(f, "a", { session: "s1", ...shared })).to.deep.equal([1, "1", 1]);
    expect(await acquire(f, "a", { session: "s2", ...shared })).to.deep.equal([1, "2", 1]);
    const third = await acquire(f, "a", { session: "s3", ...shared });
    expect(third.slice(0, 2)).to.deep.equal([2, 1]);
  });

  it("grants any number of shared claims with limit 0", async () => {
    for (let i = 1; i <= 5; i++) {
      expect(await acquire(f, "a", { session: `s${i}`, mode: 2, limit: 0 })).to.deep.equal([1, String(i), 1]);
    }
  });

  it("queues a shared claim behind an exclusive holder", async () => {
    await acquire(f, "a", { session: "s1", mode: 1 });
    const reply = await acquire(f, "a", { session: "s2", mode: 2, limit: 0 });
    expect(reply.slice(0, 2)).to.deep.equal([2, 1]);
  });

  it("queues a shared claim that would fit behind an earlier waiter (FIFO)", async () => {
    await acquire(f, "a", { session: "s1", mode: 2, limit: 0 });
    await acquire(f, "a", { session: "s2", request: "w", mode: 1 });
    const reply = await acquire(f, "a", { session: "s3", request: "r", mode: 2, limit: 0 });
    expect(reply.slice(0, 2)).to.deep.equal([2, 2]);
    expect(await f.redis.zcard(keys("a").holders)).to.equal(1);
  });

  it("purges an expired holder and grants the next claim a greater token", async () => {
    await acquire(f, "a", { session: "s1", ttl: 80 });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    expect(await acquire(f, "a", { session: "s2" })).to.deep.equal([1, "2", 1]);
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s2:o"]);
    expect(await f.redis.hexists(keys("a").data, "h:s1:o")).to.equal(0);
  });

  it("purges an expired waiter, so the next claim takes its place in the queue", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", ttl: 80 });
    await waitForLeaseEnd(f.redis, keys("a").leases, "s2:r");
    expect((await acquire(f, "a", { session: "s3" })).slice(0, 2)).to.deep.equal([2, 1]);
    expect(await f.redis.hexists(keys("a").data, "w:s2:r")).to.equal(0);
  });

  it("answers QUEUED with 0 ms when only waiters are left (the holder's lease ended)", async () => {
    await acquire(f, "a", { session: "s1", ttl: 80 });
    await acquire(f, "a", { session: "s2", ttl: LONG_TTL });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    expect(await acquire(f, "a", { session: "s3" })).to.deep.equal([2, 2, 0]);
  });

  it("accepts a new shared limit once every holder of the old one has expired", async () => {
    await acquire(f, "a", { session: "s1", mode: 2, limit: 2, ttl: 80 });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    expect(await acquire(f, "a", { session: "s2", mode: 2, limit: 3 })).to.deep.equal([1, "2", 1]);
  });

  // The rule (docs/semaphores.md): a SHARED limit, once set, holds until the name is idle — no
  // holder and no waiter — even if only exclusive claims remain meanwhile.
  it("keeps the shared limit in force until the name is idle, even after its shared waiter left", async () => {
    await acquire(f, "a", { session: "x1", mode: 1 });
    await acquire(f, "a", { session: "s2", mode: 2, limit: 2 });
    await release(f, "a", { session: "s2", request: "r" });
    const reply = await acquire(f, "a", { session: "s3", mode: 2, limit: 3 });
    expect(reply).to.deep.equal([4, "2"]);
  });

  it("accepts a new shared limit once the last holder of the old one has released", async () => {
    await acquire(f, "a", { session: "s1", mode: 2, limit: 2 });
    await release(f, "a", { session: "s1" });
    expect(await acquire(f, "a", { session: "s2", mode: 2, limit: 3 })).to.deep.equal([1, "2", 1]);
  });

  describe("on an idle lock (no holder, nobody queued)", () => {
    it("grants at once with the next token, exact as a string past 2^53, and records only the new holder", async () => {
      await f.redis.set(keys("a").fence, "9007199254740993");
      const before = await redisNow(f.redis);
      expect(await acquire(f, "a", { session: "s1", request: "r1", value: "v1" })).to.deep.equal([
        1,
        "9007199254740994",
        1,
      ]);
      const data = { "h:s1:o": "9007199254740994 1 1 s1:r1", "v:s1:o": "v1", excl: "1" };
      const { "a:s1:o": grantedAt, ...rest } = await f.redis.hgetall(keys("a").data);
      expect(rest).to.deep.equal(data);
      expect(Number(grantedAt)).to.be.within(before, await redisNow(f.redis));
    });

    it("grants a shared claim and sets its limit, which later claims must name and cannot exceed", async () => {
      expect(await acquire(f, "a", { session: "s1", mode: 2, limit: 2 })).to.deep.equal([1, "1", 1]);
      const { "a:s1:o": grantedAt, ...rest } = await f.redis.hgetall(keys("a").data);
      expect([rest, typeof grantedAt]).to.deep.equal([{ "h:s1:o": "1 1 2 s1:r", "v:s1:o": "", limit: "2" }, "string"]);
      expect(await acquire(f, "a", { session: "s2", mode: 2, limit: 3 })).to.deep.equal([4, "2"]);
      expect(await acquire(f, "a", { session: "s3", mode: 2, limit: 2 })).to.deep.equal([1, "2", 1]);
      expect((await acquire(f, "a", { session: "s4", mode: 2, limit: 2 })).slice(0, 2)).to.deep.equal([2, 1]);
    });

    it("grants once purging leaves it idle, dropping the expired holder's limit and the expired waiter's value", async () => {
      await acquire(f, "a", { session: "s1", mode: 2, limit: 2, ttl: 50 });
      await acquire(f, "a", { session: "s2", mode: 1, ttl: 50, value: "queued" });
      await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
      await waitForLeaseEnd(f.redis, keys("a").leases, "s2:r");
      expect(await acquire(f, "a", { session: "s3", mode: 2, limit: 3 })).to.deep.equal([1, "2", 1]);
      const { "a:s3:o": grantedAt, ...rest } = await f.redis.hgetall(keys("a").data);
      expect([rest, typeof grantedAt]).to.deep.equal([{ "h:s3:o": "2 1 2 s3:r", "v:s3:o": "", limit: "3" }, "string"]);
      expect(await f.redis.zcard(keys("a").queue)).to.equal(0);
    });
  });
});
