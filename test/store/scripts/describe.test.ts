import { expect } from "chai";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import { acquire, describeLock, keys, LONG_TTL, redisNow, useScripts } from "./script-fixture.js";

/** describe.lua's reply with Buffers turned into text. */
async function described(f: ReturnType<typeof useScripts>, name: string) {
  const text = (x: unknown): unknown => (Buffer.isBuffer(x) ? x.toString() : Array.isArray(x) ? x.map(text) : x);
  return text(await describeLock(f, name)) as [string, string, (string | number)[], (string | number)[]];
}

describe("describe.lua", () => {
  const f = useScripts();

  it("returns version 0, no limit and no entries for a lock never used", async () => {
    expect(await described(f, "a")).to.deep.equal(["0", "", [], [], -1]);
  });

  it("returns the holders with their records, lease left and values, the waiters, and the version of the last change", async () => {
    await acquire(f, "a", { session: "s1", mode: 2, limit: 2, request: "r1", value: "one" });
    await acquire(f, "a", { session: "s2", mode: 2, limit: 2, request: "r2", value: "two" });
    await acquire(f, "a", { session: "s3", mode: 1, request: "r3" });
    const [version, limit, holders, waiters] = await described(f, "a");
    expect(version).to.equal(await f.redis.get(keys("a").version));
    expect(limit).to.equal("2");
    // Each holder: id, record, lease left, value, ms held, release request ('' when none).
    expect(holders.filter((_, i) => i % 6 !== 2 && i % 6 !== 4)).to.deep.equal([
      "s1:o",
      "1 1 2 s1:r1",
      "one",
      "",
      "s2:o",
      "2 1 2 s2:r2",
      "two",
      "",
    ]);
    expect(holders[2]).to.be.within(LONG_TTL - 5_000, LONG_TTL);
    expect([waiters[0], waiters[1]]).to.deep.equal(["s3:r3", "c1 1 0 o"]);
    expect(waiters[2]).to.be.within(LONG_TTL - 5_000, LONG_TTL);
  });

  it("returns each holder's ms held since its grant and each waiter's ms waited since it first queued", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2" });
    const now = await redisNow(f.redis);
    // Back-date the recorded times: the script must report now minus them, and 0 for a missing one.
    await f.redis.hset(keys("a").data, "a:s1:o", now - 5_000, "q:s2:r", now - 2_000);
    await acquire(f, "a", { session: "s3" });
    await f.redis.hdel(keys("a").data, "q:s3:r");
    const [, , holders, waiters] = await described(f, "a");
    expect(holders[4]).to.be.within(5_000, 6_000);
    // Each waiter: id, record, lease left, ms waited, set names, queue score.
    expect([waiters[0], waiters[6]]).to.deep.equal(["s2:r", "s3:r"]);
    expect(waiters[3]).to.be.within(2_000, 3_000);
    expect(waiters[9]).to.equal(0);
  });

  it("returns a binary value unchanged", async () => {
    const value = Buffer.from([0, 10, 255, 13, 10]);
    await acquire(f, "a", { session: "s1", value });
    const reply = (await describeLock(f, "a")) as [Buffer, Buffer, Buffer[], Buffer[]];
    expect(reply[2][3].equals(value)).to.equal(true);
  });

  it("leaves out holders and waiters whose lease ended, and changes nothing", async () => {
    await acquire(f, "a", { session: "s1", ttl: 50 });
    await acquire(f, "a", { session: "s2", ttl: 50 });
    await waitForLeaseEnd(f.redis, keys("a").leases, "s2:r");
    const [, , holders, waiters] = await described(f, "a");
    expect([holders, waiters]).to.deep.equal([[], []]);
    expect(await f.redis.zcard(keys("a").holders)).to.equal(1);
    expect(await f.redis.zcard(keys("a").queue)).to.equal(1);
  });
});
