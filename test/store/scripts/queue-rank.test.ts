import { expect } from "chai";
import { priorityOf } from "../../../server/store/redis/scripts/acquire.js";
import { acquire, describeLock, keys, release, useScripts } from "./script-fixture.js";

/** Priorities in the queue (includes/queue-rank.lua), through acquire.lua, against Redis. */
describe("queue-rank.lua (priority) in acquire.lua", () => {
  const f = useScripts();

  it("queues a waiter ahead of every lower priority, FIFO within one, and answers its position", async () => {
    await acquire(f, "a", { session: "s0" });
    expect((await acquire(f, "a", { session: "s1" }))[1]).to.equal(1);
    expect((await acquire(f, "a", { session: "s2", priority: 5 }))[1]).to.equal(1);
    expect((await acquire(f, "a", { session: "s3", priority: 5 }))[1]).to.equal(2);
    expect((await acquire(f, "a", { session: "s4", priority: 9 }))[1]).to.equal(1);
    expect((await acquire(f, "a", { session: "s5" }))[1]).to.equal(5);
    expect(await f.redis.zrange(keys("a").queue, 0, "-1")).to.deep.equal(["s4:r", "s2:r", "s3:r", "s1:r", "s5:r"]);
    // A re-sent request keeps its place.
    expect((await acquire(f, "a", { session: "s3", priority: 5 }))[1]).to.equal(3);
  });

  it("hands the lock on in that order, and never pre-empts the holder", async () => {
    await acquire(f, "a", { session: "s0" });
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", priority: 3 });
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s0:o"]);
    const released = await release(f, "a", { session: "s0" });
    expect(released[2]).to.deep.equal(["s2:r", "2"]);
  });

  it("priority 0 scores the arrival number itself: the same queue and data as without the argument", async () => {
    await acquire(f, "a", { session: "s0" });
    await acquire(f, "a", { session: "s1", priority: 0 });
    await acquire(f, "a", { session: "s2" });
    expect(await f.redis.zrange(keys("a").queue, 0, "-1", "WITHSCORES")).to.deep.equal(["s1:r", "1", "s2:r", "2"]);
    expect(await f.redis.hexists(keys("a").data, "y:s1:r")).to.equal(0);
  });

  it("describe's queue score tells each waiter's priority", async () => {
    await acquire(f, "a", { session: "s0" });
    await acquire(f, "a", { session: "s1", priority: 100 });
    await acquire(f, "a", { session: "s2" });
    await acquire(f, "a", { session: "s3", priority: 1 });
    const waiters = ((await describeLock(f, "a")) as Buffer[][])[3];
    const scores = [5, 11, 17].map((i) => priorityOf(Number(String(waiters[i]))));
    expect(scores).to.deep.equal([100, 1, 0]);
  });
});
