import { expect } from "chai";
import {
  acquire,
  type GrantFeed,
  keys,
  LONG_TTL,
  RETAIN_MS,
  release,
  subscribeGrants,
  useScripts,
} from "./script-fixture.js";

describe("release.lua", () => {
  const f = useScripts();
  let feed: GrantFeed | undefined;
  afterEach(() => {
    feed?.close();
    feed = undefined;
  });

  /** s1 holds "a" exclusively; each further session queues one exclusive request "r". */
  async function heldWithWaiters(...sessions: string[]) {
    await acquire(f, "a", { session: "s1" });
    for (const session of sessions) await acquire(f, "a", { session });
  }

  it("returns RELEASED with the holds left when one of two holds is dropped", async () => {
    await acquire(f, "a", { session: "s1", request: "r1" });
    await acquire(f, "a", { session: "s1", request: "r2" });
    expect(await release(f, "a", { session: "s1" })).to.deep.equal([11, 1, []]);
    expect(await f.redis.hget(keys("a").data, "h:s1:o")).to.equal("1 1 1 s1:r1");
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s1:o"]);
  });

  it("returns RELEASED with 0 holds left and drops every hold with all", async () => {
    await acquire(f, "a", { session: "s1", request: "r1" });
    await acquire(f, "a", { session: "s1", request: "r2" });
    expect(await release(f, "a", { session: "s1", all: true })).to.deep.equal([11, 0, []]);
    expect(await f.redis.zcard(keys("a").holders)).to.equal(0);
  });

  it("returns NOT_HELD for a claim that holds nothing, and leaves the holder alone", async () => {
    await acquire(f, "a", { session: "s1" });
    expect(await release(f, "a", { session: "s1", owner: "other" })).to.deep.equal([12, 0, []]);
    expect(await release(f, "a", { session: "s2" })).to.deep.equal([12, 0, []]);
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s1:o"]);
  });

  it("returns WITHDRAWN and removes a queued waiter's entry, lease and record", async () => {
    await heldWithWaiters("s2");
    expect(await release(f, "a", { session: "s2", request: "r" })).to.deep.equal([13, 0, []]);
    const k = keys("a");
    expect(await f.redis.zcard(k.queue)).to.equal(0);
    expect(await f.redis.zcard(k.leases)).to.equal(0);
    expect(await f.redis.hexists(k.data, "w:s2:r")).to.equal(0);
  });

  it("returns GRANT_RELEASED for a waiter granted before its withdrawal, and hands the lock on", async () => {
    await heldWithWaiters("s2", "s3");
    expect(await release(f, "a", { session: "s1" })).to.deep.equal([11, 0, ["s2:r", "2"]]);
    expect(await release(f, "a", { session: "s2", request: "r" })).to.deep.equal([14, 0, ["s3:r", "3"]]);
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s3:o"]);
    expect(await f.redis.hexists(keys("a").data, "h:s2:o")).to.equal(0);
  });

  describe("with 'abandon' (the waiter's stream broke)", () => {
    it("returns WITHDRAWN for a waiter still attached to the calling coordinator", async () => {
      await heldWithWaiters("s2");
      expect(await release(f, "a", { session: "s2", request: "r", how: "abandon" })).to.deep.equal([13, 0, []]);
      expect(await f.redis.zcard(keys("a").queue)).to.equal(0);
    });

    it("returns GONE and keeps a waiter re-attached to another coordinator by a resume", async () => {
      await heldWithWaiters("s2");
      await acquire(f, "a", { session: "s2", coord: "c2" });
      const reply = await release(f, "a", { session: "s2", request: "r", how: "abandon", coord: "c1" });
      expect(reply).to.deep.equal([15, 0, []]);
      expect(await f.redis.hget(keys("a").data, "w:s2:r")).to.equal("c2 1 0 o");
    });

    it("returns GONE and leaves a raced grant held, for the resumed session to claim", async () => {
      await heldWithWaiters("s2");
      await release(f, "a", { session: "s1" });
      expect(await release(f, "a", { session: "s2", request: "r", how: "abandon" })).to.deep.equal([15, 0, []]);
      expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s2:o"]);
    });
  });

  it("returns GONE for a request neither queued nor granted, and keeps a hold from another request", async () => {
    await acquire(f, "a", { session: "s1", request: "r1" });
    expect(await release(f, "a", { session: "s2", request: "never" })).to.deep.equal([15, 0, []]);
    expect(await release(f, "a", { session: "s1", request: "r9" })).to.deep.equal([15, 0, []]);
    expect(await f.redis.hget(keys("a").data, "h:s1:o")).to.equal("1 1 1 s1:r1");
  });

  it("deletes the lock's other keys when the last hold goes, keeping the fence retain ms past the last lease", async () => {
    await heldWithWaiters("s2");
    await release(f, "a", { session: "s2", request: "r" });
    await release(f, "a", { session: "s1" });
    const k = keys("a");
    expect(await f.redis.exists(k.holders, k.data, k.queue, k.leases)).to.equal(0);
    expect(await f.redis.get(k.fence)).to.equal("1");
    expect(await f.redis.pttl(k.fence)).to.be.within(LONG_TTL + RETAIN_MS - 5_000, LONG_TTL + RETAIN_MS);
  });

  it("keeps fencing tokens strictly increasing across releases and hand-offs", async () => {
    const tokens: bigint[] = [];
    for (let i = 0; i < 4; i++) {
      const [, token] = await acquire(f, "a", { session: `s${i}` });
      tokens.push(BigInt(token as string));
      await acquire(f, "a", { session: `w${i}` });
      const [, , granted] = await release(f, "a", { session: `s${i}` });
      tokens.push(BigInt((granted as string[])[1]));
      await release(f, "a", { session: `w${i}` });
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i] > tokens[i - 1]).to.equal(true);
    expect(tokens.at(-1)).to.equal(8n);
  });

  it("hands an exclusive lock to the head waiter only, carrying over its lease deadline", async () => {
    await heldWithWaiters("s2", "s3");
    const lease = await f.redis.zscore(keys("a").leases, "s2:r");
    expect(await release(f, "a", { session: "s1" })).to.deep.equal([11, 0, ["s2:r", "2"]]);
    const k = keys("a");
    expect(await f.redis.zscore(k.holders, "s2:o")).to.equal(lease);
    expect(await f.redis.hget(k.data, "h:s2:o")).to.equal("2 1 1 s2:r");
    expect(await f.redis.zrange(k.queue, 0, "-1")).to.deep.equal(["s3:r"]);
    expect(await f.redis.hexists(k.data, "w:s2:r")).to.equal(0);
  });

  it("returns a grant to the caller's own coordinator in the reply and publishes nothing", async () => {
    await heldWithWaiters("s2");
    feed = await subscribeGrants(f.server.url);
    expect(await release(f, "a", { session: "s1", coord: "c1" })).to.deep.equal([11, 0, ["s2:r", "2"]]);
    // Messages arrive in order: if the marker comes first, the release published nothing.
    await f.redis.publish("t:grants:marker", "end");
    expect(await feed.next()).to.deep.equal({ channel: "t:grants:marker", message: "end" });
  });

  it("publishes a grant for another coordinator's waiter on <prefix><coord> as waiter, token, name", async () => {
    await acquire(f, "a", { session: "s1", coord: "c1" });
    await acquire(f, "a", { session: "s2", coord: "c2" });
    feed = await subscribeGrants(f.server.url);
    expect(await release(f, "a", { session: "s1", coord: "c1" })).to.deep.equal([11, 0, []]);
    expect(await feed.next()).to.deep.equal({ channel: "t:grants:c2", message: "s2:r\n2\na" });
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s2:o"]);
  });

  it("grants consecutive shared waiters together and stops at an exclusive waiter", async () => {
    await acquire(f, "a", { session: "s1", mode: 1 });
    await acquire(f, "a", { session: "s2", mode: 2, limit: 0 });
    await acquire(f, "a", { session: "s3", mode: 2, limit: 0 });
    await acquire(f, "a", { session: "x4", mode: 1 });
    await acquire(f, "a", { session: "s5", mode: 2, limit: 0 });
    expect(await release(f, "a", { session: "s1" })).to.deep.equal([11, 0, ["s2:r", "2", "s3:r", "3"]]);
    expect(await f.redis.zrange(keys("a").queue, 0, "-1")).to.deep.equal(["x4:r", "s5:r"]);
  });

  it("lets an exclusive waiter at the head block later shared waiters while readers remain", async () => {
    await acquire(f, "a", { session: "s1", mode: 2, limit: 0 });
    await acquire(f, "a", { session: "s2", mode: 2, limit: 0 });
    await acquire(f, "a", { session: "x3", mode: 1 });
    await acquire(f, "a", { session: "s4", mode: 2, limit: 0 });
    expect(await release(f, "a", { session: "s1" })).to.deep.equal([11, 0, []]);
    expect(await f.redis.zrange(keys("a").queue, 0, "-1")).to.deep.equal(["x3:r", "s4:r"]);
    expect(await release(f, "a", { session: "s2" })).to.deep.equal([11, 0, ["x3:r", "3"]]);
    expect(await f.redis.zrange(keys("a").queue, 0, "-1")).to.deep.equal(["s4:r"]);
  });

  it("grants shared waiters only up to the limit in force", async () => {
    const shared = { mode: 2, limit: 2 } as const;
    for (const session of ["s1", "s2", "s3", "s4", "s5"]) await acquire(f, "a", { session, ...shared });
    expect(await release(f, "a", { session: "s1" })).to.deep.equal([11, 0, ["s3:r", "3"]]);
    expect(await f.redis.zcard(keys("a").holders)).to.equal(2);
    expect(await f.redis.zrange(keys("a").queue, 0, "-1")).to.deep.equal(["s4:r", "s5:r"]);
  });

  /** The grant (a:) and queue (q:) time fields of lock "a", by field name. */
  async function timeFields(): Promise<string[]> {
    return Object.keys(await f.redis.hgetall(keys("a").data))
      .filter((k) => /^[aq]:/.test(k))
      .sort();
  }

  it("records the grant time of a handed-on waiter and drops the queue and grant times of entries that leave", async () => {
    await heldWithWaiters("s2", "s3", "s4");
    expect(await timeFields()).to.deep.equal(["a:s1:o", "q:s2:r", "q:s3:r", "q:s4:r"]);
    await release(f, "a", { session: "s1" });
    await release(f, "a", { session: "s4", request: "r" });
    expect(await timeFields()).to.deep.equal(["a:s2:o", "q:s3:r"]);
  });
});
