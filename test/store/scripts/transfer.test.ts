import { expect } from "chai";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import {
  acquire,
  type ChannelFeed,
  describeLock,
  GRANTS,
  keys,
  release,
  subscribeChannels,
  transfer,
  useScripts,
} from "./script-fixture.js";

/** transfer.lua, directly against Redis: each return code, what it changes and what it publishes. */
describe("transfer.lua", () => {
  const f = useScripts();
  let feed: ChannelFeed;
  beforeEach(async () => {
    feed = await subscribeChannels(f.server.url, keys("a").events, `${GRANTS}c2`);
  });
  afterEach(() => feed.close());

  async function published() {
    const all = await feed.drain(f.redis);
    const on = (channel: string) => all.filter((m) => m.channel === channel).map((m) => m.message);
    return { events: on(keys("a").events).map(String), grants: on(`${GRANTS}c2`).map(String) };
  }

  it("TRANSFERRED: the named waiter holds with a higher token, published as one change from the old holder", async () => {
    await acquire(f, "a", { session: "s1", request: "r1", value: "old" });
    await acquire(f, "a", { session: "s1", request: "r1b" }); // a re-entry: every count goes
    await acquire(f, "a", { session: "s2", request: "r2", value: "head" });
    await acquire(f, "a", { session: "s3", request: "r3", owner: "p", value: "new" });
    const reply = await transfer(f, "a", { session: "s1", token: "1", to: "s3", toOwner: "p" });
    expect(reply).to.deep.equal([51, ["s3:r3", "2"], "2", "s3:r3", "s3:p"]);
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s3:p"]);
    expect(await f.redis.zrange(keys("a").queue, 0, "-1")).to.deep.equal(["s2:r2"]);
    expect(await f.redis.hget(keys("a").data, "h:s3:p")).to.equal("2 1 1 s3:r3");
    expect(await f.redis.hexists(keys("a").data, "h:s1:o")).to.equal(0);
    const { events } = await published();
    // acquired s1, then the transfer: one event, holders left 1, the old holder's token, count and value with it.
    expect(events).to.have.length(2);
    const [head, holder, from, rest] = events[1].split("\n");
    expect(head.split(" ").slice(1)).to.deep.equal([
      "transferred",
      "2",
      "1",
      "1",
      "1",
      head.split(" ")[6],
      "1",
      "2",
      "1",
      "3",
    ]);
    expect([holder, from, rest]).to.deep.equal(["s3:p", "s1:o", "oldnew"]);
  });

  it("TRANSFERRED to the head of the queue with an empty successor, passing over nobody", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", request: "r2" });
    await acquire(f, "a", { session: "s3", request: "r3" });
    expect(await transfer(f, "a", { session: "s1", token: "1" })).to.deep.equal([
      51,
      ["s2:r2", "2"],
      "2",
      "s2:r2",
      "s2:o",
    ]);
  });

  it("TRANSFERRED to another coordinator's waiter goes out on its grant channel", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", request: "r2", coord: "c2" });
    expect(await transfer(f, "a", { session: "s1", token: "1", to: "s2" })).to.deep.equal([
      51,
      [],
      "2",
      "s2:r2",
      "s2:o",
    ]);
    expect((await published()).grants).to.deep.equal(["s2:r2\n2\na"]);
  });

  it("no lock-delay applies: the old hold's delay is dropped with it", async () => {
    await acquire(f, "a", { session: "s1", lockDelay: 30_000 });
    await acquire(f, "a", { session: "s2", request: "r2" });
    await transfer(f, "a", { session: "s1", token: "1" });
    await release(f, "a", { session: "s2" });
    expect((await acquire(f, "a", { session: "s3" }))[0]).to.equal(1);
  });

  it("NOT_HELD for a hold whose lease ended: purged, its lock-delay in force, the keys left to expire with it", async () => {
    await acquire(f, "a", { session: "s1", ttl: 50, lockDelay: 20_000, mode: 2, limit: 2 });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    expect(await transfer(f, "a", { session: "s1", token: "1" })).to.deep.equal([52, []]);
    const end = Number(await f.redis.hget(keys("a").data, "delay"));
    expect(await f.redis.zscore(keys("a").holders, "s1:o")).to.equal(null);
    expect(await f.redis.pexpiretime(keys("a").holders)).to.equal(end);
    expect(await f.redis.pexpiretime(keys("a").data)).to.equal(end);
  });

  it("a re-run after a lost reply answers the same transfer again, changing nothing", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", request: "r2" });
    await transfer(f, "a", { session: "s1", token: "1", to: "s2" });
    expect(await transfer(f, "a", { session: "s1", token: "1", to: "s2" })).to.deep.equal([
      51,
      [],
      "2",
      "s2:r2",
      "s2:o",
    ]);
    expect(await f.redis.get(keys("a").fence)).to.equal("2");
    // Another token of the same owner is not that transfer.
    expect(await transfer(f, "a", { session: "s1", token: "7" })).to.deep.equal([52, []]);
  });

  it("NOT_WAITING names who does wait (holder and waiter ids), changing nothing", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", request: "r2" });
    await acquire(f, "a", { session: "s3", request: "r3", owner: "q" });
    expect(await transfer(f, "a", { session: "s1", token: "1", to: "s9" })).to.deep.equal([
      55,
      [],
      ["s2:o", "s2:r2", "s3:q", "s3:r3"],
    ]);
    expect(await transfer(f, "a", { session: "s1", token: "1", to: "s3", toOwner: "o" })).to.have.property("0", 55);
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s1:o"]);
  });

  it("SHARED: a shared hold is not transferred", async () => {
    await acquire(f, "a", { session: "s1", mode: 2, limit: 1 });
    await acquire(f, "a", { session: "s2", request: "r2", mode: 2, limit: 1 });
    expect(await transfer(f, "a", { session: "s1", token: "1" })).to.deep.equal([53, []]);
  });

  it("a shared successor lets the shared waiters behind it in (the hand-on)", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", request: "r2", mode: 2, limit: 0 });
    await acquire(f, "a", { session: "s3", request: "r3", mode: 2, limit: 0 });
    const reply = await transfer(f, "a", { session: "s1", token: "1", to: "s2" });
    expect(reply).to.deep.equal([51, ["s2:r2", "2", "s3:r3", "3"], "2", "s2:r2", "s2:o"]);
  });

  it("describe shows the successor as the one holder", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", request: "r2" });
    await transfer(f, "a", { session: "s1", token: "1" });
    const [, , holders, waiters] = (await describeLock(f, "a")) as [unknown, unknown, Buffer[], Buffer[]];
    expect(String(holders[0])).to.equal("s2:o");
    expect(holders).to.have.length(6);
    expect(waiters).to.deep.equal([]);
  });
});
