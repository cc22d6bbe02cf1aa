import { expect } from "chai";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import {
  acquire,
  type ChannelFeed,
  keys,
  LONG_TTL,
  proclaim,
  splitEvent,
  subscribeChannels,
  useScripts,
} from "./script-fixture.js";

describe("proclaim.lua", () => {
  const f = useScripts();
  let feed: ChannelFeed;
  beforeEach(async () => {
    feed = await subscribeChannels(f.server.url, keys("a").events);
  });
  afterEach(() => feed.close());

  it("returns PROCLAIMED, stores the value and publishes a 'value' change with the same token and the lease left", async () => {
    await acquire(f, "a", { session: "s1", value: "old" });
    const acquired = splitEvent((await feed.next()).message);
    expect(await proclaim(f, "a", { session: "s1", value: "new" })).to.deep.equal([31]);
    expect(await f.redis.hget(keys("a").data, "v:s1:o")).to.equal("new");
    const { head, holder, value } = splitEvent((await feed.next()).message);
    expect(BigInt(head[0])).to.equal(BigInt(acquired.head[0]) + 1n);
    expect(head.slice(1, 6)).to.deep.equal(["value", "1", "1", "1", "1"]);
    expect(Number(head[6])).to.be.within(LONG_TTL - 5_000, LONG_TTL);
    expect([holder, value]).to.deep.equal(["s1:o", "new"]);
  });

  it("returns NOT_HELD for a session and owner that hold nothing, or only wait, and stores nothing", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", value: "queued" });
    expect(await proclaim(f, "a", { session: "s1", owner: "other", value: "x" })).to.deep.equal([32]);
    expect(await proclaim(f, "a", { session: "s2", value: "x" })).to.deep.equal([32]);
    expect(await f.redis.hget(keys("a").data, "v:s2:o")).to.equal("queued");
    expect(await f.redis.hexists(keys("a").data, "v:s1:other")).to.equal(0);
  });

  it("returns NOT_HELD for a holder whose lease has ended, and leaves its value alone", async () => {
    await acquire(f, "a", { session: "s1", ttl: 50, value: "old" });
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    expect(await proclaim(f, "a", { session: "s1", value: "new" })).to.deep.equal([32]);
    expect(await f.redis.hget(keys("a").data, "v:s1:o")).to.equal("old");
  });
});
