import { expect } from "chai";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import {
  acquire,
  type ChannelFeed,
  GRANTS,
  keys,
  REVOCATIONS,
  revoke,
  splitEvent,
  subscribeChannels,
  useScripts,
} from "./script-fixture.js";

describe("revoke.lua", () => {
  const f = useScripts();
  let feed: ChannelFeed;
  beforeEach(async () => {
    feed = await subscribeChannels(f.server.url, keys("a").events, REVOCATIONS, `${GRANTS}c2`);
  });
  afterEach(() => feed.close());

  /** Every message published so far, by channel. */
  async function published() {
    const all = await feed.drain(f.redis);
    const on = (channel: string) => all.filter((m) => m.channel === channel).map((m) => m.message);
    return {
      events: on(keys("a").events).map(splitEvent),
      revocations: on(REVOCATIONS).map(String),
      grants: on(`${GRANTS}c2`).map(String),
    };
  }

  it("returns REVOKED with the token and every hold count, drops the hold and its value, and broadcasts the revocation", async () => {
    await acquire(f, "a", { session: "s1", request: "r1", value: "v" });
    await acquire(f, "a", { session: "s1", request: "r2" });
    expect(await revoke(f, "a", { session: "s1" })).to.deep.equal([21, "1", 2, []]);
    expect(await f.redis.exists(keys("a").holders, keys("a").data)).to.equal(0);
    const { events, revocations } = await published();
    expect(revocations).to.deep.equal(["s1\no\n1\na"]);
    expect(events.map((e) => [e.head[1], e.head[5], e.holder, e.value])).to.deep.equal([
      ["acquired", "1", "s1:o", "v"],
      ["revoked", "0", "s1:o", "v"],
    ]);
  });

  it("hands the lock on at once: to the caller's own waiter in the reply, another coordinator's by its grant channel", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", coord: "c1" });
    expect(await revoke(f, "a", { session: "s1" })).to.deep.equal([21, "1", 1, ["s2:r", "2"]]);
    await acquire(f, "a", { session: "s3", coord: "c2" });
    expect(await revoke(f, "a", { session: "s2" })).to.deep.equal([21, "2", 1, []]);
    const { events, grants } = await published();
    expect(grants).to.deep.equal(["s3:r\n3\na"]);
    expect(events.map((e) => `${e.head[1]} ${e.holder}`)).to.deep.equal([
      "acquired s1:o",
      "revoked s1:o",
      "acquired s2:o",
      "revoked s2:o",
      "acquired s3:o",
    ]);
  });

  it("returns NOT_HELD for a session and owner that hold nothing, and touches nobody", async () => {
    await acquire(f, "a", { session: "s1" });
    expect(await revoke(f, "a", { session: "s1", owner: "other" })).to.deep.equal([22, 0, 0, []]);
    expect(await revoke(f, "a", { session: "s2" })).to.deep.equal([22, 0, 0, []]);
    expect(await revoke(f, "nothing", { session: "s1" })).to.deep.equal([22, 0, 0, []]);
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s1:o"]);
    expect((await published()).revocations).to.deep.equal([]);
  });

  it("returns NOT_HELD for a holder whose lease already ended, purging it (expired) and handing the lock on", async () => {
    await acquire(f, "a", { session: "s1", ttl: 50 });
    await acquire(f, "a", { session: "s2" });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    expect(await revoke(f, "a", { session: "s1" })).to.deep.equal([22, 0, 0, ["s2:r", "2"]]);
    const { events, revocations } = await published();
    expect(revocations).to.deep.equal([]);
    expect(events.map((e) => `${e.head[1]} ${e.holder}`)).to.deep.equal([
      "acquired s1:o",
      "expired s1:o",
      "acquired s2:o",
    ]);
  });

  it("returns INVALID_SESSION for a session containing ':' and touches nothing, not even the hold it aliases", async () => {
    await acquire(f, "a", { session: "s1", owner: "a:b", ttl: 50 });
    await acquire(f, "a", { session: "s2" });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:a:b");
    // "s1:a" + ":" + "b" is the holder id of session s1, owner "a:b".
    expect(await revoke(f, "a", { session: "s1:a", owner: "b" })).to.deep.equal([23, 0, 0, []]);
    // Not even the purge ran: the expired holder and the waiter are where they were.
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s1:a:b"]);
    expect(await f.redis.zrange(keys("a").queue, 0, "-1")).to.deep.equal(["s2:r"]);
    const { events, revocations } = await published();
    expect([events.map((e) => `${e.head[1]} ${e.holder}`), revocations]).to.deep.equal([["acquired s1:a:b"], []]);
  });

  /** The grant (a:) and queue (q:) time fields of lock "a", by field name. */
  async function timeFields(): Promise<string[]> {
    return Object.keys(await f.redis.hgetall(keys("a").data))
      .filter((k) => /^[aq]:/.test(k))
      .sort();
  }

  it("drops the revoked hold's grant time and records the grant time of the waiter it hands on to", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2" });
    await revoke(f, "a", { session: "s1" });
    expect(await timeFields()).to.deep.equal(["a:s2:o"]);
  });
});
