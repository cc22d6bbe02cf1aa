import { expect } from "chai";
import { ask, holdOf, renewOne, SHORT_TTL, waiterOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";
import { passTime } from "./wait-for.js";

/** Release: holds left, not-held, and the FIFO hand-off to the head waiter. */
export function releaseConformance(f: ConformanceFixture): void {
  f.it("releases one hold at a time, answering the holds left", async () => {
    await f.store.acquire(ask("a", "s1", { requestId: "r1" }));
    await f.store.acquire(ask("a", "s1", { requestId: "r2" }));
    expect(await f.store.release(holdOf("a", "s1"), false)).to.deep.equal({
      kind: "released",
      holdCount: 1,
    });
    expect(await f.store.acquire(ask("a", "s2", { mayWait: false }))).to.deep.equal({
      kind: "busy",
    });
    expect(await f.store.release(holdOf("a", "s1"), false)).to.deep.equal({
      kind: "released",
      holdCount: 0,
    });
    expect(await f.store.acquire(ask("a", "s2"))).to.deep.equal({
      kind: "granted",
      token: 2n,
      holdCount: 1,
    });
  });

  f.it("drops every hold at once with all", async () => {
    for (const requestId of ["r1", "r2", "r3"]) await f.store.acquire(ask("a", "s1", { requestId }));
    expect(await f.store.release(holdOf("a", "s1"), true)).to.deep.equal({
      kind: "released",
      holdCount: 0,
    });
    expect(await f.store.release(holdOf("a", "s1"), false)).to.deep.equal({ kind: "not-held" });
  });

  f.it("answers not-held for a claim that holds nothing, and leaves the holder alone", async () => {
    await f.store.acquire(ask("a", "s1"));
    expect(await f.store.release(holdOf("a", "s1", "other"), false)).to.deep.equal({
      kind: "not-held",
    });
    expect(await f.store.release(holdOf("a", "s2"), true)).to.deep.equal({ kind: "not-held" });
    expect(await f.store.release(holdOf("nothing-here", "s1"), false)).to.deep.equal({
      kind: "not-held",
    });
    expect(await f.store.acquire(ask("a", "s1", { requestId: "r2" }))).to.deep.include({
      holdCount: 2,
    });
  });

  f.it("answers not-held for a waiter that was never granted", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2"));
    expect(await f.store.release(holdOf("a", "s2"), false)).to.deep.equal({ kind: "not-held" });
    expect((await f.store.check("a", [waiterOf("a", "s2")])).statuses).to.deep.equal([{ kind: "queued" }]);
  });

  f.it("hands the lock to the head waiter on release, and tells the listener before release resolves", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { requestId: "r2" }));
    await f.store.acquire(ask("a", "s3", { requestId: "r3" }));
    expect(await f.store.release(holdOf("a", "s1"), false)).to.deep.equal({
      kind: "released",
      holdCount: 0,
    });
    expect(f.listener.grants).to.deep.equal([{ name: "a", sessionId: "s2", requestId: "r2", token: 2n }]);
    expect((await f.store.check("a", [waiterOf("a", "s3", "r3")])).statuses).to.deep.equal([{ kind: "queued" }]);
    await f.store.release(holdOf("a", "s2"), false);
    expect(f.listener.grants.slice(1)).to.deep.equal([{ name: "a", sessionId: "s3", requestId: "r3", token: 3n }]);
  });

  f.it(
    "stamps a grant made by a release with when the release was issued, and one made by a re-check not",
    async () => {
      await f.store.acquire(ask("a", "s1"));
      await f.store.acquire(ask("a", "s2", { requestId: "r2", ttlMs: SHORT_TTL }));
      await f.store.acquire(ask("a", "s3", { requestId: "r3" }));
      const before = performance.now();
      await f.store.release(holdOf("a", "s1"), false);
      expect(f.listener.freedAt[0]).to.be.within(before, performance.now());
      await passTime(f.store, SHORT_TTL);
      await f.store.check("a", [waiterOf("a", "s3", "r3")]);
      expect(f.listener.grants.map((g) => g.sessionId)).to.deep.equal(["s2", "s3"]);
      expect(f.listener.freedAt[1]).to.equal(undefined);
    },
  );

  f.it("makes the granted waiter the holder, with its owner", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { owner: "w", requestId: "r2" }));
    await f.store.release(holdOf("a", "s1"), false);
    expect(await f.store.acquire(ask("a", "s2", { owner: "w", requestId: "r3" }))).to.deep.equal({
      kind: "granted",
      token: 2n,
      holdCount: 2,
    });
    expect(await f.store.release(holdOf("a", "s2", "w"), true)).to.deep.equal({
      kind: "released",
      holdCount: 0,
    });
  });

  f.it("gives a granted waiter the lease deadline of its queue entry", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2"));
    // Shorten the queue entry's lease: the hold it becomes must end with it, not a full TTL later.
    expect(await renewOne(f.store, "a", "s2", 2_000, [], [waiterOf("a", "s2")])).to.deep.equal({
      holds: [],
      waiters: ["queued"],
    });
    await f.store.release(holdOf("a", "s1"), false);
    expect((await f.store.check("a", [])).recheckInMs).to.be.within(1, 2_000);
  });
}
