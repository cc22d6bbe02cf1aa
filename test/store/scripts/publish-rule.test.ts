import { expect } from "chai";
import type { Redis } from "ioredis";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import {
  acquire,
  type ChannelFeed,
  check,
  describeLock,
  keys,
  type Publish,
  proclaim,
  release,
  revoke,
  splitEvent,
  subscribeChannels,
  useScripts,
} from "./script-fixture.js";

/** PUBLISH calls Redis has run so far, scripts' included (INFO commandstats; FLUSHALL keeps it). */
async function publishCalls(redis: Redis): Promise<number> {
  const match = /cmdstat_publish:calls=(\d+)/.exec(await redis.info("commandstats"));
  return match ? Number(match[1]) : 0;
}

describe("the publish rule of the holder-change scripts", () => {
  const f = useScripts();
  let feed: ChannelFeed | undefined;
  afterEach(() => {
    feed?.close();
    feed = undefined;
  });

  /** The version counter of lock "a" as a BigInt (it starts at the Redis clock in µs). */
  async function version(): Promise<bigint> {
    return BigInt((await f.redis.get(keys("a").version)) ?? "0");
  }

  /**
   * Runs acquire, a queued acquire, proclaim, a release that hands the lock on, and revoke on lock
   * "a" (own coordinator, so no grant message), checking the version after each: one more per change.
   */
  async function everyChange(publish: Publish): Promise<void> {
    await acquire(f, "a", { session: "s1", publish });
    const first = await version();
    await acquire(f, "a", { session: "s2", publish });
    expect(await version()).to.equal(first);
    await proclaim(f, "a", { session: "s1", value: "v", publish });
    expect(await version()).to.equal(first + 1n);
    expect((await release(f, "a", { session: "s1", publish }))[0]).to.equal(11);
    expect(await version()).to.equal(first + 3n);
    expect((await revoke(f, "a", { session: "s2", publish }))[0]).to.equal(21);
    expect(await version()).to.equal(first + 4n);
  }

  it("publishes nothing with 'watched' while nobody subscribes, yet counts every change in the version", async () => {
    const before = await publishCalls(f.redis);
    await everyChange("watched");
    for (let i = 0; i < 3; i++) {
      const v = await version();
      await acquire(f, "a", { session: "s1", request: `r${i}` });
      await release(f, "a", { session: "s1" });
      expect(await version()).to.equal(v + 2n);
    }
    // Only revoke's broadcast on the revocation channel, which every coordinator subscribes to.
    expect(await publishCalls(f.redis)).to.equal(before + 1);
  });

  it("publishes nothing with 'watched' for an expiry nobody watches that check purges", async () => {
    await acquire(f, "a", { session: "s1", ttl: 50 });
    const v = await version();
    const before = await publishCalls(f.redis);
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    await check(f, "a", "c1", []);
    expect(await version()).to.equal(v + 1n);
    expect(await publishCalls(f.redis)).to.equal(before);
  });

  it("publishes every change with 'always' though nobody subscribes (Cluster: NUMSUB sees one node)", async () => {
    const before = await publishCalls(f.redis);
    await everyChange("always");
    // acquired, value, released, acquired (hand-off), revoked; and the revocation broadcast.
    expect(await publishCalls(f.redis)).to.equal(before + 6);
  });

  it("publishes with 'always' from check too", async () => {
    await acquire(f, "a", { session: "s1", ttl: 50 });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    const before = await publishCalls(f.redis);
    await check(f, "a", "c1", [], "always");
    expect(await publishCalls(f.redis)).to.equal(before + 1);
  });

  it("starts publishing with 'watched' once a subscriber appears, numbered on from the snapshot's version", async () => {
    await acquire(f, "a", { session: "s1" });
    await release(f, "a", { session: "s1" });
    feed = await subscribeChannels(f.server.url, keys("a").events);
    const snapshot = BigInt(String((await describeLock(f, "a"))[0]));
    await acquire(f, "a", { session: "s2" });
    const { head, holder } = splitEvent((await feed.next()).message);
    expect([BigInt(head[0]), head[1], holder]).to.deep.equal([snapshot + 1n, "acquired", "s2:o"]);
    expect(await feed.drain(f.redis)).to.deep.equal([]);
  });
});
