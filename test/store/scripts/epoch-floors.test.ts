import { expect } from "chai";
import {
  acquire,
  type ChannelFeed,
  check,
  type GrantFeed,
  keys,
  proclaim,
  release,
  revoke,
  splitEvent,
  subscribeChannels,
  subscribeGrants,
  useScripts,
} from "./script-fixture.js";

/** The floors a master elected in epoch 1 passes: tokens above 1 << 32, versions above `v`. */
const EPOCH_1 = String(1n << 32n);

describe("epoch floors and unpublished grants (acquire, release, check, revoke, proclaim)", () => {
  const f = useScripts();
  let events: ChannelFeed | undefined;
  let grants: GrantFeed | undefined;
  afterEach(() => {
    events?.close();
    grants?.close();
    events = grants = undefined;
  });

  it("acquire grants a token above the token floor, and counts on from there", async () => {
    await acquire(f, "a", { session: "s0" });
    await release(f, "a", { session: "s0" });
    // The counter (1) is below the new epoch's floor: the next token jumps above it.
    expect(await acquire(f, "a", { session: "s1", floors: `${EPOCH_1} 0` })).to.deep.equal([
      1,
      `${EPOCH_1.slice(0, -1)}7`,
      1,
    ]);
    await release(f, "a", { session: "s1" });
    expect(await acquire(f, "a", { session: "s2", floors: `${EPOCH_1} 0` })).to.deep.equal([1, "4294967298", 1]);
  });

  it("never lowers a counter already above the floor", async () => {
    await f.redis.set(keys("a").fence, "4294967300");
    expect(await acquire(f, "a", { session: "s1", floors: `${EPOCH_1} 0` })).to.deep.equal([1, "4294967301", 1]);
  });

  it("release, check and revoke hand the lock on with tokens above the floor", async () => {
    const floors = `${EPOCH_1} 0`;
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2" });
    await acquire(f, "a", { session: "s3" });
    await acquire(f, "a", { session: "s4" });
    expect(await release(f, "a", { session: "s1", floors })).to.deep.equal([11, 0, ["s2:r", "4294967297"]]);
    expect(await revoke(f, "a", { session: "s2", floors })).to.deep.equal([
      21,
      "4294967297",
      1,
      ["s3:r", "4294967298"],
    ]);
    await f.redis.zadd(keys("a").holders, 0, "s3:o");
    const reply = await check(f, "a", "c1", [], "watched", `${2n << 32n} 0`);
    expect(reply[1]).to.deep.equal(["s4:r", String((2n << 32n) + 1n)]);
  });

  it("numbers a holder change above the version floor, then by one", async () => {
    events = await subscribeChannels(f.server.url, keys("a").events);
    const floor = 5_000_000_000_000_000;
    await acquire(f, "a", { session: "s1", floors: `0 ${floor}` });
    expect(splitEvent((await events.next()).message).head[0]).to.equal(String(floor + 1));
    await proclaim(f, "a", { session: "s1", value: "v", floors: `0 ${floor}` });
    expect(splitEvent((await events.next()).message).head[0]).to.equal(String(floor + 2));
  });

  it("returns another coordinator's grant as 'coordinator waiter' and publishes nothing when the grant prefix is ''", async () => {
    grants = await subscribeGrants(f.server.url);
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", coord: "c2" });
    expect(await release(f, "a", { session: "s1", grantPrefix: "" })).to.deep.equal([11, 0, ["c2 s2:r", "2"]]);
    await f.redis.publish("t:grants:marker", "m");
    expect((await grants.next()).channel).to.equal("t:grants:marker");
  });
});
