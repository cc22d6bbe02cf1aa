import { expect } from "chai";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import {
  acquire,
  check,
  type GrantFeed,
  keys,
  LONG_TTL,
  RETAIN_MS,
  redisNow,
  release,
  subscribeGrants,
  useScripts,
} from "./script-fixture.js";

describe("check.lua", () => {
  const f = useScripts();
  let feed: GrantFeed | undefined;
  afterEach(() => {
    feed?.close();
    feed = undefined;
  });

  it("reports 'q' for a waiter still queued and the ms until the holder's lease ends", async () => {
    await acquire(f, "a", { session: "s1", ttl: 10_000 });
    await acquire(f, "a", { session: "s2" });
    const deadline = Number(await f.redis.zscore(keys("a").holders, "s1:o"));
    const [ms, granted, statuses] = await check(f, "a", "c1", [["s2:r", "s2:o"]]);
    const after = await redisNow(f.redis);
    expect(ms)
      .to.be.a("number")
      .within(deadline - after, 10_000);
    expect(granted).to.deep.equal([]);
    expect(statuses).to.deep.equal(["q"]);
  });

  it("reports the token of a waiter granted by another coordinator's release", async () => {
    await acquire(f, "a", { session: "s1", coord: "c1" });
    await acquire(f, "a", { session: "s2", coord: "c2" });
    await release(f, "a", { session: "s1", coord: "c1" });
    const [ms, granted, statuses] = await check(f, "a", "c2", [["s2:r", "s2:o"]]);
    expect(ms).to.be.within(1, LONG_TTL);
    expect(granted).to.deep.equal([]);
    expect(statuses).to.deep.equal(["2"]);
  });

  it("reports '' for a waiter never queued and for one whose lease ended, and purges the latter", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", ttl: 80 });
    await waitForLeaseEnd(f.redis, keys("a").leases, "s2:r");
    const [, , statuses] = await check(f, "a", "c1", [
      ["s2:r", "s2:o"],
      ["s9:r", "s9:o"],
    ]);
    expect(statuses).to.deep.equal(["", ""]);
    expect(await f.redis.zcard(keys("a").queue)).to.equal(0);
    expect(await f.redis.hexists(keys("a").data, "w:s2:r")).to.equal(0);
  });

  it("reports '' for a waiter whose holder id holds the lock through another request", async () => {
    await acquire(f, "a", { session: "s1", request: "r1" });
    const [, , statuses] = await check(f, "a", "c1", [
      ["s1:r2", "s1:o"],
      ["s1:r1", "s1:o"],
    ]);
    expect(statuses).to.deep.equal(["", "1"]);
  });

  it("returns -1 and no statuses when nobody holds the lock", async () => {
    expect(await check(f, "free", "c1", [])).to.deep.equal([-1, [], []]);
  });

  it("hands the lock to the head waiter once the holder's lease has ended, in the reply for its own coordinator", async () => {
    await acquire(f, "a", { session: "s1", ttl: 80 });
    await acquire(f, "a", { session: "s2", coord: "c1" });
    await acquire(f, "a", { session: "s3", coord: "c1" });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    const [ms, granted, statuses] = await check(f, "a", "c1", [
      ["s2:r", "s2:o"],
      ["s3:r", "s3:o"],
    ]);
    expect(ms).to.be.within(1, LONG_TTL);
    expect(granted).to.deep.equal(["s2:r", "2"]);
    expect(statuses).to.deep.equal(["2", "q"]);
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s2:o"]);
  });

  it("publishes a hand-off to another coordinator's waiter once the holder's lease has ended", async () => {
    await acquire(f, "a", { session: "s1", ttl: 80 });
    await acquire(f, "a", { session: "s2", coord: "c2" });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    feed = await subscribeGrants(f.server.url);
    const [, granted] = await check(f, "a", "c1", []);
    expect(granted).to.deep.equal([]);
    expect(await feed.next()).to.deep.equal({ channel: "t:grants:c2", message: "s2:r\n2\na" });
  });

  it("grants consecutive shared waiters together once an exclusive holder's lease has ended", async () => {
    await acquire(f, "a", { session: "s1", ttl: 80 });
    await acquire(f, "a", { session: "s2", mode: 2, limit: 0 });
    await acquire(f, "a", { session: "s3", mode: 2, limit: 0 });
    await acquire(f, "a", { session: "x4", mode: 1 });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    const [, granted] = await check(f, "a", "c1", []);
    expect(granted).to.deep.equal(["s2:r", "2", "s3:r", "3"]);
    expect(await f.redis.zrange(keys("a").queue, 0, "-1")).to.deep.equal(["x4:r"]);
  });

  it("deletes the lock's other keys but keeps the fence once the last lease has ended", async () => {
    await acquire(f, "a", { session: "s1", ttl: 80 });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    expect(await check(f, "a", "c1", [["s1:r", "s1:o"]])).to.deep.equal([-1, [], [""]]);
    const k = keys("a");
    expect(await f.redis.exists(k.holders, k.data, k.queue, k.leases)).to.equal(0);
    expect(await f.redis.get(k.fence)).to.equal("1");
    expect(await f.redis.pttl(k.fence)).to.be.within(RETAIN_MS - 5_000, RETAIN_MS);
  });

  /** The grant (a:) and queue (q:) time fields of lock "a", by field name. */
  async function timeFields(): Promise<string[]> {
    return Object.keys(await f.redis.hgetall(keys("a").data))
      .filter((k) => /^[aq]:/.test(k))
      .sort();
  }

  it("drops an expired hold's grant time and an expired waiter's queue time, and records a hand-on's grant time", async () => {
    await acquire(f, "a", { session: "s1", ttl: 50 });
    await acquire(f, "a", { session: "s2", ttl: 50 });
    await acquire(f, "a", { session: "s3" });
    await waitForLeaseEnd(f.redis, keys("a").leases, "s2:r");
    await check(f, "a", "c1", []);
    expect(await timeFields()).to.deep.equal(["a:s3:o"]);
  });
});
