import { expect } from "chai";
import {
  acquire,
  type ChannelFeed,
  keys,
  type Publish,
  release,
  subscribeChannels,
  useScripts,
} from "./script-fixture.js";

// The Redis work of the hot path (issue 8): commands a script runs inside Redis, counted by
// INFO's total_commands_processed, which counts every redis.call as well as the EVALSHA itself.
describe("the commands of an uncontended acquire + release cycle", () => {
  const f = useScripts();
  let feed: ChannelFeed | undefined;
  afterEach(() => {
    feed?.close();
    feed = undefined;
  });

  async function processed(): Promise<number> {
    return Number(/total_commands_processed:(\d+)/.exec(await f.redis.info("stats"))?.[1]);
  }

  /** Commands run inside `op`'s script: the delta less the EVALSHA and the INFO that read `before`. */
  async function inside(op: () => Promise<unknown[]>): Promise<number> {
    const before = await processed();
    await op();
    return (await processed()) - before - 2;
  }

  /** [acquire, release] commands inside the scripts, on lock "a" cycled a few times first. */
  async function cycle(publish: Publish, mode: 1 | 2 = 1): Promise<[number, number]> {
    // The first cycle creates the version counter (two commands more) and loads the scripts.
    for (let i = 0; i < 3; i++) {
      await acquire(f, "a", { session: "s1", mode, publish });
      await release(f, "a", { session: "s1", publish });
    }
    const granted = await inside(() => acquire(f, "a", { session: "s1", mode, limit: 2, publish }));
    const released = await inside(() => release(f, "a", { session: "s1", publish }));
    return [granted, released];
  }

  it("runs 10 + 8 while nobody watches the lock, exclusive or shared", async () => {
    expect(await cycle("watched", 1)).to.deep.equal([10, 8]);
    expect(await cycle("watched", 2)).to.deep.equal([10, 8]);
  });

  it("runs 14 + 12 while a subscriber watches the lock", async () => {
    feed = await subscribeChannels(f.server.url, keys("a").events);
    expect(await cycle("watched")).to.deep.equal([14, 12]);
  });

  it("runs 13 + 11 when told to publish always (Cluster)", async () => {
    expect(await cycle("always")).to.deep.equal([13, 11]);
  });
});
