import { expect } from "chai";
import { ask, askShared, holdOf, LONG_TTL, SHORT_TTL, waiterOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";
import { passTime } from "./wait-for.js";

/** Acquire: grant, re-entry, queueing, busy, conflict and upgrade. */
export function acquireConformance(f: ConformanceFixture): void {
  f.it("grants a free lock with token 1 and hold count 1", async () => {
    expect(await f.store.acquire(ask("a", "s1"))).to.deep.equal({
      kind: "granted",
      token: 1n,
      holdCount: 1,
    });
  });

  f.it("re-enters for the same session and owner: the count goes up and the token stays", async () => {
    await f.store.acquire(ask("a", "s1", { requestId: "r1" }));
    await f.store.acquire(ask("a", "s2"));
    expect(await f.store.acquire(ask("a", "s1", { requestId: "r2" }))).to.deep.equal({
      kind: "granted",
      token: 1n,
      holdCount: 2,
    });
    expect(await f.store.acquire(ask("a", "s1", { requestId: "r3", mayWait: false }))).to.deep.equal({
      kind: "granted",
      token: 1n,
      holdCount: 3,
    });
  });

  f.it("answers a re-sent re-entry with its count again, counting it once; another request id counts", async () => {
    await f.store.acquire(ask("a", "s1", { requestId: "r1" }));
    const reentry = { kind: "granted", token: 1n, holdCount: 2 };
    expect(await f.store.acquire(ask("a", "s1", { requestId: "r2" }))).to.deep.equal(reentry);
    expect(await f.store.acquire(ask("a", "s1", { requestId: "r2" }))).to.deep.equal(reentry);
    expect(await f.store.acquire(ask("a", "s1", { requestId: "r3" }))).to.deep.equal({ ...reentry, holdCount: 3 });
    expect(await f.store.release(holdOf("a", "s1"), false)).to.deep.equal({
      kind: "released",
      holdCount: 2,
    });
  });

  f.it("treats another owner in the same session as another claim", async () => {
    await f.store.acquire(ask("a", "s1"));
    expect(await f.store.acquire(ask("a", "s1", { owner: "o2", requestId: "r2" }))).to.include({
      kind: "queued",
      position: 1,
    });
  });

  f.it("queues claims behind the holder with their positions and the ms until its lease ends", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: 10_000 }));
    const first = await f.store.acquire(ask("a", "s2"));
    expect(first).to.include({ kind: "queued", position: 1 });
    expect(first).to.have.property("recheckInMs").that.is.within(1, 10_000);
    expect(await f.store.acquire(ask("a", "s3"))).to.include({ kind: "queued", position: 2 });
    expect(await f.store.acquire(ask("a", "s4", { requestId: "r4" }))).to.include({
      kind: "queued",
      position: 3,
    });
  });

  f.it("answers busy to a try-once claim on a held lock and leaves no queue entry", async () => {
    await f.store.acquire(ask("a", "s1"));
    expect(await f.store.acquire(ask("a", "s2", { mayWait: false }))).to.deep.equal({
      kind: "busy",
    });
    expect((await f.store.check("a", [waiterOf("a", "s2")])).statuses).to.deep.equal([{ kind: "gone" }]);
    expect(await f.store.acquire(ask("a", "s3"))).to.include({ kind: "queued", position: 1 });
  });

  f.it("answers busy to a try-once claim on a free lock that others wait for", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: SHORT_TTL }));
    await f.store.acquire(ask("a", "s2"));
    await passTime(f.store, SHORT_TTL);
    expect(await f.store.acquire(ask("a", "s3", { mayWait: false }))).to.deep.equal({
      kind: "busy",
    });
  });

  f.it("queues a claim behind the waiters once the holder's lease has ended, with 0 ms to wait", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: SHORT_TTL }));
    await f.store.acquire(ask("a", "s2", { ttlMs: LONG_TTL }));
    await passTime(f.store, SHORT_TTL);
    expect(await f.store.acquire(ask("a", "s3"))).to.deep.equal({
      kind: "queued",
      position: 2,
      recheckInMs: 0,
    });
  });

  f.it("answers conflict with the limit in force when a shared claim names another limit", async () => {
    await f.store.acquire(askShared("a", "s1", 2));
    expect(await f.store.acquire(askShared("a", "s2", 3))).to.deep.equal({
      kind: "conflict",
      limitInForce: 2,
    });
    expect(await f.store.acquire(askShared("a", "s3", 0, { mayWait: false }))).to.deep.equal({
      kind: "conflict",
      limitInForce: 2,
    });
    expect(await f.store.acquire(askShared("a", "s4", 2))).to.deep.include({
      kind: "granted",
      holdCount: 1,
    });
  });

  f.it("answers conflict to a shared holder re-entering with another limit, and keeps its hold", async () => {
    await f.store.acquire(askShared("a", "s1", 2, { requestId: "r1" }));
    expect(await f.store.acquire(askShared("a", "s1", 3, { requestId: "r2" }))).to.deep.equal({
      kind: "conflict",
      limitInForce: 2,
    });
    expect(await f.store.release(holdOf("a", "s1"), false)).to.deep.equal({
      kind: "released",
      holdCount: 0,
    });
  });

  f.it("refuses to upgrade a shared hold to exclusive and keeps the hold", async () => {
    await f.store.acquire(askShared("a", "s1", 0, { requestId: "r1" }));
    expect(await f.store.acquire(ask("a", "s1", { requestId: "r2" }))).to.deep.equal({
      kind: "upgrade",
    });
    expect(await f.store.release(holdOf("a", "s1"), false)).to.deep.equal({
      kind: "released",
      holdCount: 0,
    });
  });

  f.it("lets an exclusive holder re-enter with a shared claim", async () => {
    await f.store.acquire(ask("a", "s1", { requestId: "r1" }));
    expect(await f.store.acquire(askShared("a", "s1", 5, { requestId: "r2" }))).to.deep.equal({
      kind: "granted",
      token: 1n,
      holdCount: 2,
    });
    expect(await f.store.acquire(askShared("a", "s2", 5))).to.include({
      kind: "queued",
      position: 1,
    });
  });
}
