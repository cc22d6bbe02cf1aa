import { expect } from "chai";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import {
  acquire,
  type ChannelFeed,
  check,
  keys,
  LONG_TTL,
  RETAIN_MS,
  redisNow,
  release,
  splitEvent,
  subscribeChannels,
  useScripts,
} from "./script-fixture.js";

const DAY_MS = 86_400_000;

describe("holder changes published by acquire.lua, release.lua and check.lua", () => {
  const f = useScripts();
  let feed: ChannelFeed;
  beforeEach(async () => {
    feed = await subscribeChannels(f.server.url, keys("a").events);
  });
  afterEach(() => feed.close());

  /** The next published change: [version, kind, token, count, mode, holders left, lease ms], holder, value. */
  async function next() {
    return splitEvent((await feed.next()).message);
  }

  it("publishes 'acquired' for a fresh grant, numbered from the Redis clock in µs, with the holder's value", async () => {
    const before = (await redisNow(f.redis)) * 1000;
    await acquire(f, "a", { session: "s1", ttl: 10_000, value: "leader-1" });
    const after = (await redisNow(f.redis)) * 1000 + 1000;
    const { head, holder, value } = await next();
    expect(Number(head[0])).to.be.within(before, after);
    expect(head.slice(1)).to.deep.equal(["acquired", "1", "1", "1", "1", "10000"]);
    expect([holder, value]).to.deep.equal(["s1:o", "leader-1"]);
    expect(await f.redis.hget(keys("a").data, "v:s1:o")).to.equal("leader-1");
    expect(await f.redis.get(keys("a").version)).to.equal(head[0]);
  });

  it("creates the version counter to lapse a day past the fence retention", async () => {
    await acquire(f, "a", { session: "s1" });
    await next();
    expect(await f.redis.pttl(keys("a").version)).to.be.within(RETAIN_MS + DAY_MS - 5_000, RETAIN_MS + DAY_MS);
  });

  it("publishes nothing for a re-entry, a queued acquire or a refused one", async () => {
    await acquire(f, "a", { session: "s1", request: "r1" });
    const first = await next();
    await acquire(f, "a", { session: "s1", request: "r2" });
    await acquire(f, "a", { session: "s2", request: "r3" });
    await acquire(f, "a", { session: "s3", request: "r4", mayWait: false });
    await release(f, "a", { session: "s1", all: true });
    const released = await next();
    expect(released.head.slice(1, 4)).to.deep.equal(["released", "1", "2"]);
    expect(BigInt(released.head[0])).to.equal(BigInt(first.head[0]) + 1n);
  });

  it("publishes 'released' and then 'acquired' for the head waiter, with consecutive versions and its queued value", async () => {
    await acquire(f, "a", { session: "s1", value: "one" });
    await acquire(f, "a", { session: "s2", value: "two" });
    expect(await f.redis.hget(keys("a").data, "v:s2:o")).to.equal("two");
    await release(f, "a", { session: "s1" });
    const [acquired, released, handed] = [await next(), await next(), await next()];
    expect(released.head.slice(1, 6)).to.deep.equal(["released", "1", "1", "1", "0"]);
    expect([released.holder, released.value, released.head[6]]).to.deep.equal(["s1:o", "one", "0"]);
    expect(handed.head.slice(1, 6)).to.deep.equal(["acquired", "2", "1", "1", "1"]);
    expect(Number(handed.head[6])).to.be.within(LONG_TTL - 5_000, LONG_TTL);
    expect([handed.holder, handed.value]).to.deep.equal(["s2:o", "two"]);
    const versions = [acquired, released, handed].map((e) => BigInt(e.head[0]));
    expect(versions).to.deep.equal([versions[0], versions[0] + 1n, versions[0] + 2n]);
    expect(await f.redis.hexists(keys("a").data, "v:s1:o")).to.equal(0);
  });

  it("publishes 'expired' when acquire purges a holder whose lease ended, before granting the new claim", async () => {
    await acquire(f, "a", { session: "s1", ttl: 50 });
    await next();
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    await acquire(f, "a", { session: "s2" });
    const [expired, acquired] = [await next(), await next()];
    expect([expired.head[1], expired.head[5], expired.holder]).to.deep.equal(["expired", "0", "s1:o"]);
    expect([acquired.head[1], acquired.head[5], acquired.holder]).to.deep.equal(["acquired", "1", "s2:o"]);
  });

  it("publishes 'expired' and 'acquired' when check purges a holder and hands the lock on", async () => {
    await acquire(f, "a", { session: "s1", ttl: 50 });
    await acquire(f, "a", { session: "s2", value: "next" });
    await next();
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    await check(f, "a", "c1", []);
    const [expired, acquired] = [await next(), await next()];
    expect([expired.head[1], expired.holder, acquired.head[1], acquired.holder]).to.deep.equal([
      "expired",
      "s1:o",
      "acquired",
      "s2:o",
    ]);
    expect(acquired.value).to.equal("next");
  });

  it("carries a binary value, newlines and all, unchanged", async () => {
    const value = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await acquire(f, "a", { session: "s1", value });
    const message = (await feed.next()).message;
    expect(message.subarray(message.length - 256).equals(value)).to.equal(true);
    expect((await f.redis.hgetBuffer(keys("a").data, "v:s1:o"))?.equals(value)).to.equal(true);
  });

  it("drops a withdrawn waiter's value with its queue entry", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", value: "gone soon" });
    await release(f, "a", { session: "s2", request: "r" });
    expect(await f.redis.hexists(keys("a").data, "v:s2:o")).to.equal(0);
  });

  it("restarts a lapsed version counter above every version it issued", async () => {
    await acquire(f, "a", { session: "s1" });
    const first = BigInt((await next()).head[0]);
    await release(f, "a", { session: "s1" });
    await next();
    await f.redis.del(keys("a").version);
    await acquire(f, "a", { session: "s1" });
    expect(BigInt((await next()).head[0]) > first + 1n).to.equal(true);
  });
});
