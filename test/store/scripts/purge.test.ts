import { expect } from "chai";
import { acquire, keys, LONG_TTL, redisNow, release, useScripts } from "./script-fixture.js";

// purge.lua reads each sorted set's 16 lowest scores in one call and counts the set from that read when it
// has fewer members. These cases sit past that edge, where it must count (ZCARD) or range (ZRANGEBYSCORE)
// again; the edge's one-call side is counted in cycle-cost.test.ts.
describe("purge.lua (included by every script that decides)", () => {
  const f = useScripts();
  const PEEK = 16;

  /** `count` shared holds of lock "a" under the given limit, sessions s0, s1, ... */
  async function shared(count: number, limit: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      expect((await acquire(f, "a", { session: `s${i}`, mode: 2, limit, ttl: LONG_TTL }))[0]).to.equal(1);
    }
  }

  /** `count` exclusive waiters of lock "a" behind holder h, sessions w0, w1, ... */
  async function waiters(count: number): Promise<void> {
    expect((await acquire(f, "a", { session: "h" }))[0]).to.equal(1);
    for (let i = 0; i < count; i++) {
      expect((await acquire(f, "a", { session: `w${i}`, ttl: LONG_TTL }))[0]).to.equal(2);
    }
  }

  /** Ends the leases of `members` of the sorted set `key` now (by the Redis clock), whatever the setup took. */
  async function endLeases(key: string, members: string[]): Promise<void> {
    const past = (await redisNow(f.redis)) - 1;
    for (const m of members) expect(await f.redis.zadd(key, "XX", "CH", past, m)).to.equal(1);
  }
  const range = (n: number, prefix: string, suffix: string) =>
    Array.from({ length: n }, (_, i) => `${prefix}${i}${suffix}`);

  it("counts every live holder when there are more than it reads at once (a full semaphore stays full)", async () => {
    await shared(PEEK + 1, PEEK + 1);
    expect(await acquire(f, "a", { session: "late", mode: 2, limit: PEEK + 1, mayWait: false })).to.deep.equal([3]);
    await release(f, "a", { session: "s0" });
    expect((await acquire(f, "a", { session: "late", mode: 2, limit: PEEK + 1, mayWait: false }))[0]).to.equal(1);
  });

  it("purges every ended holder when more have ended than it reads at once", async () => {
    await shared(PEEK + 2, PEEK + 4);
    await endLeases(keys("a").holders, range(PEEK + 2, "s", ":o"));
    expect(await acquire(f, "a", { session: "next", mode: 2, limit: 3 })).to.deep.equal([1, String(PEEK + 3), 1]);
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["next:o"]);
    expect(await f.redis.hexists(keys("a").data, `h:s${PEEK + 1}:o`)).to.equal(0);
  });

  it("purges the ended holders and keeps the live ones counted when both are past what it reads at once", async () => {
    await shared(PEEK + 2, PEEK + 2);
    await endLeases(keys("a").holders, range(3, "s", ":o"));
    // 3 ended, 15 live of 18: three more fit, a fourth does not.
    for (const s of ["x", "y", "z"]) {
      expect((await acquire(f, "a", { session: s, mode: 2, limit: PEEK + 2, mayWait: false }))[0]).to.equal(1);
    }
    expect(await acquire(f, "a", { session: "v", mode: 2, limit: PEEK + 2, mayWait: false })).to.deep.equal([3]);
    expect(await f.redis.zscore(keys("a").holders, "s0:o")).to.equal(null);
  });

  it("counts every live waiter when there are more than it reads at once", async () => {
    await waiters(PEEK + 1);
    expect((await acquire(f, "a", { session: "late" })).slice(0, 2)).to.deep.equal([2, PEEK + 2]);
  });

  it("purges every waiter whose lease ended when more ended than it reads at once", async () => {
    await waiters(PEEK + 2);
    await endLeases(keys("a").leases, range(PEEK + 2, "w", ":r"));
    expect((await acquire(f, "a", { session: "late" })).slice(0, 2)).to.deep.equal([2, 1]);
    expect(await f.redis.zcard(keys("a").queue)).to.equal(1);
    expect(await f.redis.hexists(keys("a").data, `w:w${PEEK + 1}:r`)).to.equal(0);
  });
});
