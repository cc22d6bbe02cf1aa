import { expect } from "chai";
import { ask, holdOf, waiterOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";

/** Withdraw: a queued waiter leaves, a raced grant is released and handed on, else gone. */
export function withdrawConformance(f: ConformanceFixture): void {
  f.it("withdraws a queued waiter, which is then never granted", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { requestId: "r2" }));
    await f.store.acquire(ask("a", "s3", { requestId: "r3" }));
    expect(await f.store.withdraw(waiterOf("a", "s2", "r2"), "cancel")).to.deep.equal({ kind: "withdrawn" });
    expect(await f.store.acquire(ask("a", "s4", { requestId: "r4" }))).to.include({
      kind: "queued",
      position: 2,
    });
    await f.store.release(holdOf("a", "s1"), false);
    expect(f.listener.grants).to.deep.equal([{ name: "a", sessionId: "s3", requestId: "r3", token: 2n }]);
  });

  f.it("releases a grant that raced the withdrawal and hands the lock on", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { requestId: "r2" }));
    await f.store.acquire(ask("a", "s3", { requestId: "r3" }));
    await f.store.release(holdOf("a", "s1"), false);
    expect(await f.store.withdraw(waiterOf("a", "s2", "r2"), "cancel")).to.deep.equal({
      kind: "grant-released",
    });
    expect(f.listener.grants).to.deep.equal([
      { name: "a", sessionId: "s2", requestId: "r2", token: 2n },
      { name: "a", sessionId: "s3", requestId: "r3", token: 3n },
    ]);
    expect(await f.store.release(holdOf("a", "s2"), false)).to.deep.equal({ kind: "not-held" });
  });

  f.it("releases every hold of a raced grant, re-entered or not", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { requestId: "r2" }));
    await f.store.release(holdOf("a", "s1"), false);
    await f.store.acquire(ask("a", "s2", { requestId: "r3" }));
    expect(await f.store.withdraw(waiterOf("a", "s2", "r2"), "cancel")).to.deep.equal({
      kind: "grant-released",
    });
    expect(await f.store.acquire(ask("a", "s3"))).to.deep.equal({
      kind: "granted",
      token: 3n,
      holdCount: 1,
    });
  });

  f.it("answers gone for a waiter neither queued nor granted, and for one withdrawn twice", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2"));
    expect(await f.store.withdraw(waiterOf("a", "s9"), "cancel")).to.deep.equal({ kind: "gone" });
    expect(await f.store.withdraw(waiterOf("nothing-here", "s2"), "cancel")).to.deep.equal({
      kind: "gone",
    });
    expect(await f.store.withdraw(waiterOf("a", "s2"), "cancel")).to.deep.equal({ kind: "withdrawn" });
    expect(await f.store.withdraw(waiterOf("a", "s2"), "cancel")).to.deep.equal({ kind: "gone" });
  });

  f.it("answers gone for a request other than the one granted, and keeps the hold", async () => {
    await f.store.acquire(ask("a", "s1", { requestId: "r1" }));
    expect(await f.store.withdraw(waiterOf("a", "s1", "r9"), "cancel")).to.deep.equal({ kind: "gone" });
    expect(await f.store.release(holdOf("a", "s1"), false)).to.deep.equal({
      kind: "released",
      holdCount: 0,
    });
  });
}
