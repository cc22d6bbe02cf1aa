import { expect } from "chai";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import {
  acquire,
  type ChannelFeed,
  GRANTS,
  keys,
  RETAIN_MS,
  revoke,
  type ScriptFixture,
  splitEvent,
  subscribeChannels,
  useScripts,
} from "./script-fixture.js";

/** Runs release-token.lua for coordinator "c1": drops each [session, token]'s hold (owner "o") only if it has that token. */
async function releaseTokens(f: ScriptFixture, name: string, ...holds: [string, string][]): Promise<unknown[]> {
  const args = ["c1", RETAIN_MS, name, GRANTS, keys(name).events, "watched", "0 0"];
  for (const [session, token] of holds) args.push(session, "o", token);
  return (await f.scripts.run("release-token", keys(name).all, args)) as unknown[];
}

/** release-token.lua for one hold. */
const releaseToken = (f: ScriptFixture, name: string, session: string, token: string) =>
  releaseTokens(f, name, [session, token]);

/** The token acquire.lua granted (its reply's second value). */
async function granted(f: ScriptFixture, name: string, session: string, request = "r"): Promise<string> {
  return String((await acquire(f, name, { session, request }))[1]);
}

describe("release-token.lua", () => {
  const f = useScripts();
  let feed: ChannelFeed;
  beforeEach(async () => {
    feed = await subscribeChannels(f.server.url, keys("a").events, `${GRANTS}c2`);
  });
  afterEach(() => feed.close());

  it("returns DROPPED for the hold with that token, drops every count of it and publishes 'released'", async () => {
    const token = await granted(f, "a", "s1", "r1");
    await acquire(f, "a", { session: "s1", request: "r2" });
    expect(await releaseToken(f, "a", "s1", token)).to.deep.equal([41, 1, []]);
    expect(await f.redis.exists(keys("a").holders, keys("a").data)).to.equal(0);
    const events = (await feed.drain(f.redis)).filter((m) => m.channel === keys("a").events);
    expect(events.map((m) => splitEvent(m.message).head[1])).to.deep.equal(["acquired", "released"]);
  });

  it("hands the lock on like a release: the caller's waiter in the reply, another coordinator's by its channel", async () => {
    const token = await granted(f, "a", "s1");
    await acquire(f, "a", { session: "s2", coord: "c1" });
    expect(await releaseToken(f, "a", "s1", token)).to.deep.equal([41, 1, ["s2:r", "2"]]);
    await acquire(f, "a", { session: "s3", coord: "c2" });
    expect(await releaseToken(f, "a", "s2", "2")).to.deep.equal([41, 1, []]);
    const grants = (await feed.drain(f.redis)).filter((m) => m.channel === `${GRANTS}c2`).map((m) => String(m.message));
    expect(grants).to.deep.equal(["s3:r\n3\na"]);
  });

  it("drops every listed hold that has its token in one call, skips the others, and hands on once", async () => {
    await acquire(f, "a", { session: "s1", mode: 2 });
    await acquire(f, "a", { session: "s2", mode: 2 });
    await acquire(f, "a", { session: "s3", mode: 2 });
    await acquire(f, "a", { session: "s4" });
    // s1 and s3 by their tokens (1, 3); s2 by a stale one (the hold has 2); s9 holds nothing.
    const reply = await releaseTokens(f, "a", ["s1", "1"], ["s2", "7"], ["s3", "3"], ["s9", "1"]);
    expect(reply).to.deep.equal([41, 2, []]);
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s2:o"]);
    expect(await f.redis.hkeys(keys("a").data)).to.not.include.members(["h:s1:o", "h:s3:o", "v:s1:o", "a:s3:o"]);
    expect(await releaseTokens(f, "a", ["s2", "2"])).to.deep.equal([41, 1, ["s4:r", "4"]]);
  });

  it("returns NOT_HELD and changes nothing when the hold has another token (a later grant) or is not there", async () => {
    const first = await granted(f, "a", "s1");
    await releaseToken(f, "a", "s1", first);
    const second = await granted(f, "a", "s1", "r2");
    expect(second).to.not.equal(first);
    await acquire(f, "a", { session: "s2" });
    expect(await releaseToken(f, "a", "s1", first)).to.deep.equal([42, 0, []]);
    expect(await f.redis.hget(keys("a").data, "h:s1:o")).to.match(new RegExp(`^${second} 1 `));
    expect(await f.redis.zrange(keys("a").queue, 0, "-1")).to.deep.equal(["s2:r"]);
    expect(await releaseToken(f, "a", "s9", first)).to.deep.equal([42, 0, []]);
    expect(await releaseToken(f, "nothing", "s1", first)).to.deep.equal([42, 0, []]);
    expect(await releaseTokens(f, "a")).to.deep.equal([42, 0, []]);
  });

  it("returns NOT_HELD for a hold whose lease ended, still purging it (expired) and handing the lock on", async () => {
    const token = String((await acquire(f, "a", { session: "s1", ttl: 50 }))[1]);
    await acquire(f, "a", { session: "s2" });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    expect(await releaseToken(f, "a", "s1", token)).to.deep.equal([42, 0, ["s2:r", "2"]]);
    const events = (await feed.drain(f.redis)).filter((m) => m.channel === keys("a").events);
    expect(events.map((m) => `${splitEvent(m.message).head[1]} ${splitEvent(m.message).holder}`)).to.deep.equal([
      "acquired s1:o",
      "expired s1:o",
      "acquired s2:o",
    ]);
  });

  it("leaves a lock whose last hold it drops under a lock-delay to expire with the delay, like a release", async () => {
    await acquire(f, "a", { session: "s1", mode: 2, lockDelay: 20_000 });
    const token = String((await acquire(f, "a", { session: "s2", mode: 2 }))[1]);
    await revoke(f, "a", { session: "s1" });
    const end = Number(await f.redis.hget(keys("a").data, "delay"));
    expect(await f.redis.pttl(keys("a").holders)).to.equal(-1);
    expect(await releaseToken(f, "a", "s2", token)).to.deep.equal([41, 1, []]);
    expect(await f.redis.pexpiretime(keys("a").holders)).to.equal(end);
    expect(await f.redis.pexpiretime(keys("a").data)).to.equal(end);
  });
});
