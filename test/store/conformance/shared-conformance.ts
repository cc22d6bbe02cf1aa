import { expect } from "chai";
import { until } from "../../harness/until.js";
import { ask, askShared, holdOf, SHORT_TTL, waiterOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";
import { passTime } from "./wait-for.js";

/** Shared locks: the limit, grants of consecutive shared waiters, and exclusive waiters. */
export function sharedConformance(f: ConformanceFixture): void {
  /** The sessions granted so far, in grant order. */
  const granted = () => f.listener.grants.map((g) => g.sessionId);

  f.it("grants shared claims up to the limit, each with a new token, and queues the next", async () => {
    expect(await f.store.acquire(askShared("a", "s1", 2))).to.deep.equal({
      kind: "granted",
      token: 1n,
      holdCount: 1,
    });
    expect(await f.store.acquire(askShared("a", "s2", 2))).to.deep.equal({
      kind: "granted",
      token: 2n,
      holdCount: 1,
    });
    expect(await f.store.acquire(askShared("a", "s3", 2))).to.include({
      kind: "queued",
      position: 1,
    });
    expect(await f.store.acquire(askShared("a", "s4", 2, { mayWait: false }))).to.deep.equal({
      kind: "busy",
    });
  });

  f.it("grants any number of shared claims with limit 0", async () => {
    for (let i = 1; i <= 5; i++) {
      expect(await f.store.acquire(askShared("a", `s${i}`, 0))).to.deep.equal({
        kind: "granted",
        token: BigInt(i),
        holdCount: 1,
      });
    }
  });

  f.it("queues a shared claim behind an exclusive holder, and an exclusive claim behind a shared one", async () => {
    await f.store.acquire(ask("a", "x1"));
    expect(await f.store.acquire(askShared("a", "s2", 0))).to.include({
      kind: "queued",
      position: 1,
    });
    await f.store.acquire(askShared("b", "s1", 0));
    expect(await f.store.acquire(ask("b", "x2"))).to.include({ kind: "queued", position: 1 });
  });

  f.it("grants consecutive shared waiters together on release, stopping at an exclusive waiter", async () => {
    await f.store.acquire(ask("a", "x1"));
    await f.store.acquire(askShared("a", "s2", 0));
    await f.store.acquire(askShared("a", "s3", 0));
    await f.store.acquire(ask("a", "x4"));
    await f.store.acquire(askShared("a", "s5", 0));
    await f.store.release(holdOf("a", "x1"), false);
    expect(f.listener.grants).to.deep.equal([
      { name: "a", sessionId: "s2", requestId: "r", token: 2n },
      { name: "a", sessionId: "s3", requestId: "r", token: 3n },
    ]);
    await f.store.release(holdOf("a", "s2"), false);
    await f.store.release(holdOf("a", "s3"), false);
    expect(granted()).to.deep.equal(["s2", "s3", "x4"]);
    await f.store.release(holdOf("a", "x4"), false);
    expect(granted()).to.deep.equal(["s2", "s3", "x4", "s5"]);
  });

  f.it("lets a queued exclusive claim block later shared claims while readers remain", async () => {
    await f.store.acquire(askShared("a", "s1", 0));
    await f.store.acquire(askShared("a", "s2", 0));
    await f.store.acquire(ask("a", "x3"));
    expect(await f.store.acquire(askShared("a", "s4", 0))).to.include({
      kind: "queued",
      position: 2,
    });
    await f.store.release(holdOf("a", "s1"), false);
    expect(granted()).to.deep.equal([]);
    await f.store.release(holdOf("a", "s2"), false);
    expect(granted()).to.deep.equal(["x3"]);
  });

  f.it("grants shared waiters on release only up to the limit in force", async () => {
    for (const s of ["s1", "s2", "s3", "s4", "s5"]) await f.store.acquire(askShared("a", s, 2));
    await f.store.release(holdOf("a", "s1"), false);
    expect(granted()).to.deep.equal(["s3"]);
    await f.store.release(holdOf("a", "s2"), false);
    await f.store.release(holdOf("a", "s3"), false);
    expect(granted()).to.deep.equal(["s3", "s4", "s5"]);
  });

  f.it("grants consecutive shared waiters together once an exclusive holder's lease has ended", async () => {
    await f.store.acquire(ask("a", "x1", { ttlMs: SHORT_TTL }));
    await f.store.acquire(askShared("a", "s2", 0));
    await f.store.acquire(askShared("a", "s3", 0));
    await f.store.acquire(ask("a", "x4"));
    await until(async () => {
      await f.store.check("a", []);
      return granted().length > 0;
    }, "the hand-off at x1's lease end");
    expect(granted()).to.deep.equal(["s2", "s3"]);
  });

  f.it("keeps the limit in force while anyone holds or waits, even an exclusive holder", async () => {
    await f.store.acquire(askShared("a", "s1", 2));
    await f.store.acquire(ask("a", "x2"));
    await f.store.release(holdOf("a", "s1"), false);
    expect(granted()).to.deep.equal(["x2"]);
    expect(await f.store.acquire(askShared("a", "s3", 3))).to.deep.equal({ kind: "conflict", limitInForce: 2 });
    await f.store.acquire(ask("b", "x1"));
    await f.store.acquire(askShared("b", "s2", 2));
    await f.store.withdraw(waiterOf("b", "s2"), "cancel");
    expect(await f.store.acquire(askShared("b", "s3", 3))).to.deep.equal({ kind: "conflict", limitInForce: 2 });
  });

  f.it("accepts a new shared limit once the last holder of the old one has released", async () => {
    await f.store.acquire(askShared("a", "s1", 2));
    await f.store.release(holdOf("a", "s1"), false);
    expect(await f.store.acquire(askShared("a", "s2", 3))).to.deep.equal({
      kind: "granted",
      token: 2n,
      holdCount: 1,
    });
  });

  f.it("accepts a new shared limit once every holder of the old one has expired", async () => {
    await f.store.acquire(askShared("a", "s1", 2, { ttlMs: SHORT_TTL }));
    await f.store.acquire(askShared("a", "s2", 2, { ttlMs: SHORT_TTL }));
    await passTime(f.store, SHORT_TTL);
    expect(await f.store.acquire(askShared("a", "s3", 3))).to.deep.equal({
      kind: "granted",
      token: 3n,
      holdCount: 1,
    });
  });
}
