import { expect } from "chai";
import {
  acquire,
  type ChannelFeed,
  describeLock,
  keys,
  RELEASE_REQUESTS,
  release,
  requestRelease,
  subscribeChannels,
  useScripts,
} from "./script-fixture.js";

/** request-release.lua, directly against Redis. */
describe("request-release.lua", () => {
  const f = useScripts();
  let feed: ChannelFeed;
  beforeEach(async () => {
    feed = await subscribeChannels(f.server.url, RELEASE_REQUESTS);
  });
  afterEach(() => feed.close());

  it("ASKED: records the request on every live holder and broadcasts one message per holder", async () => {
    await acquire(f, "a", { session: "s1", mode: 2, limit: 0 });
    await acquire(f, "a", { session: "s2", mode: 2, limit: 0 });
    expect(await requestRelease(f, "a", { requester: "session s9", reason: "new\nversion" })).to.deep.equal([61, 2]);
    const messages = (await feed.drain(f.redis)).map((m) => String(m.message));
    expect(messages.sort()).to.deep.equal(["s1:o\na\nsession s9\nnew\nversion", "s2:o\na\nsession s9\nnew\nversion"]);
    expect(await f.redis.hget(keys("a").data, "p:s1:o")).to.equal("session s9\nnew\nversion");
    const [, , holders] = (await describeLock(f, "a")) as [unknown, unknown, Buffer[]];
    expect(String(holders[5])).to.equal("session s9\nnew\nversion");
  });

  it("the request ends with the hold: a release drops it", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", request: "r2" });
    await requestRelease(f, "a", { requester: "operator", reason: "" });
    await release(f, "a", { session: "s1" });
    expect(await f.redis.hexists(keys("a").data, "p:s1:o")).to.equal(0);
    const [, , holders] = (await describeLock(f, "a")) as [unknown, unknown, Buffer[]];
    expect(String(holders[5])).to.equal("");
  });

  it("NO_HOLDER: nobody holds; nothing is written or published", async () => {
    await acquire(f, "a", { session: "s1", ttl: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await requestRelease(f, "a", { requester: "operator", reason: "x" })).to.deep.equal([62, 0]);
    expect(await feed.drain(f.redis)).to.deep.equal([]);
  });
});
