import { expect } from "chai";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import { acquire, check, keys, release, revoke, useScripts } from "./script-fixture.js";

// hand-on.lua is one include behind release.lua, check.lua and revoke.lua; before it, each script had
// its own copy and the copies set 'excl' in different ways. Each path must leave the same state.
describe("hand-on.lua through release.lua, check.lua and revoke.lua", () => {
  const f = useScripts();

  const paths: [string, () => Promise<unknown>][] = [
    ["release.lua", () => release(f, "a", { session: "s1" })],
    [
      "check.lua",
      async () => {
        await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
        return check(f, "a", "c1", []);
      },
    ],
    ["revoke.lua", () => revoke(f, "a", { session: "s1" })],
  ];

  for (const [script, handOn] of paths) {
    it(`${script} grants an exclusive head waiter alone, marks the lock exclusive and keeps later waiters`, async () => {
      await acquire(f, "a", { session: "s1", mode: 2, limit: 0, ttl: script === "check.lua" ? 80 : 30_000 });
      await acquire(f, "a", { session: "s2", mode: 1 });
      await acquire(f, "a", { session: "s3", mode: 2, limit: 0 });
      await handOn();
      const k = keys("a");
      expect(await f.redis.zrange(k.holders, 0, "-1")).to.deep.equal(["s2:o"]);
      expect(await f.redis.hget(k.data, "excl")).to.equal("1");
      expect(await f.redis.hget(k.data, "h:s1:o")).to.equal(null);
      expect(await f.redis.zrange(k.queue, 0, "-1")).to.deep.equal(["s3:r"]);
      // The mark holds: a shared claim that fits by count still queues behind the exclusive holder.
      expect(await acquire(f, "a", { session: "s4", mode: 2, limit: 0, mayWait: false })).to.deep.equal([3]);
    });

    it(`${script} deletes the lock's keys but the fence and version once nobody holds or waits`, async () => {
      await acquire(f, "a", { session: "s1", mode: 1, ttl: script === "check.lua" ? 80 : 30_000 });
      await handOn();
      const k = keys("a");
      expect(await f.redis.exists(k.holders, k.data, k.queue, k.leases)).to.equal(0);
      expect(await f.redis.exists(k.fence, k.version)).to.equal(2);
    });
  }
});
