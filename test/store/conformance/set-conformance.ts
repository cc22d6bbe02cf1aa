import { expect } from "chai";
import type { SetMember } from "../../../server/store/store.js";
import { until } from "../../harness/until.js";
import { ask, askShared, holdOf, renewOne, SHORT_TTL, waiterOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";
import { askSet, sameSlotNames } from "./set-names.js";

// Names that share a Cluster slot, so every backend runs the same sets.
const [X, Y, Z] = sameSlotNames("x", 3);

/** Acquire-set (acquire-set.lua, memory-set.ts): all or nothing, holding none while it waits, blocking nobody. */
export function setConformance(f: ConformanceFixture): void {
  f.it("grants every free lock of a set at once, one new token per name, in request order", async () => {
    await f.store.acquire(ask(Y, "s0"));
    await f.store.release(holdOf(Y, "s0"), false);
    const outcome = await f.store.acquireSet(askSet([X, Y], "s1"));
    expect(outcome).to.deep.equal({ kind: "granted", tokens: [1n, 2n] });
    const [x, y] = [await f.store.describe(X), await f.store.describe(Y)];
    expect(x.holders.map((h) => [h.sessionId, h.token])).to.deep.equal([["s1", 1n]]);
    expect(y.holders.map((h) => [h.sessionId, h.token])).to.deep.equal([["s1", 2n]]);
    // Each name is an ordinary hold: released alone.
    expect(await f.store.release(holdOf(X, "s1"), false)).to.deep.equal({ kind: "released", holdCount: 0 });
    expect((await f.store.describe(Y)).holders).to.have.length(1);
  });

  f.it("queues on every name while one is held, holding none, and names the first it waits for", async () => {
    await f.store.acquire(ask(Y, "s0"));
    const outcome = await f.store.acquireSet(askSet([X, Y, Z], "s1"));
    expect(outcome).to.deep.include({ kind: "queued", index: 1, position: 1 });
    for (const name of [X, Y, Z]) {
      const state = await f.store.describe(name);
      expect(
        state.holders.map((h) => h.sessionId),
        name,
      ).to.deep.equal(name === Y ? ["s0"] : []);
      expect(
        state.waiters.map((w) => [w.sessionId, w.setNames]),
        name,
      ).to.deep.equal([["s1", [X, Y, Z]]]);
    }
  });

  f.it("blocks nobody while it waits: another session takes a free name of the set at once", async () => {
    await f.store.acquire(ask(Y, "s0"));
    await f.store.acquireSet(askSet([X, Y], "s1"));
    expect(await f.store.acquire(ask(X, "s2"))).to.deep.include({ kind: "granted" });
  });

  f.it("is passed over by a hand-on, which tells its coordinator; a re-run then grants the whole set", async () => {
    await f.store.acquire(ask(Y, "s0"));
    await f.store.acquireSet(askSet([X, Y], "s1"));
    await f.store.release(holdOf(Y, "s0"), false);
    expect(f.listener.grants).to.deep.equal([]);
    expect(f.listener.setRetries).to.deep.equal([{ name: Y, sessionId: "s1", requestId: "set" }]);
    expect(await f.store.acquireSet(askSet([X, Y], "s1"))).to.deep.include({ kind: "granted" });
    expect((await f.store.describe(X)).waiters).to.deep.equal([]);
  });

  f.it("is overtaken on a name by a plain waiter behind it when the hand-on frees that name", async () => {
    await f.store.acquire(ask(Y, "s0"));
    await f.store.acquire(ask(X, "s3"));
    await f.store.acquireSet(askSet([X, Y], "s1"));
    await f.store.acquire(ask(X, "s2", { requestId: "r2" }));
    await f.store.release(holdOf(X, "s3"), false);
    // The set cannot have X alone (Y is held): the plain waiter behind it gets X.
    expect(f.listener.grants.map((g) => [g.name, g.sessionId])).to.deep.equal([[X, "s2"]]);
    expect(await f.store.acquireSet(askSet([X, Y], "s1"))).to.deep.include({ kind: "queued", index: 0 });
  });

  f.it("waits behind a plain waiter ahead of it (FIFO), and keeps its places when re-run", async () => {
    await f.store.acquire(ask(X, "s0"));
    await f.store.acquire(ask(X, "s2", { requestId: "r2" }));
    expect(await f.store.acquireSet(askSet([X, Y], "s1"))).to.deep.include({ kind: "queued", index: 0, position: 2 });
    await f.store.release(holdOf(X, "s0"), false);
    expect(f.listener.grants.map((g) => g.sessionId)).to.deep.equal(["s2"]);
    expect(await f.store.acquireSet(askSet([X, Y], "s1"))).to.deep.include({ kind: "queued", index: 0, position: 1 });
    await f.store.release(holdOf(X, "s2"), false);
    expect(await f.store.acquireSet(askSet([X, Y], "s1"))).to.deep.include({ kind: "granted" });
  });

  f.it("answers a re-run after its grant with the same tokens, counting nothing", async () => {
    const first = await f.store.acquireSet(askSet([X, Y], "s1"));
    expect(await f.store.acquireSet(askSet([X, Y], "s1"))).to.deep.equal(first);
    expect((await f.store.describe(X)).holders[0].count).to.equal(1);
  });

  f.it("re-run still holding some names: keeps their tokens, queues only on the others, then grants them", async () => {
    expect(await f.store.acquireSet(askSet([X, Y], "s1"))).to.deep.equal({ kind: "granted", tokens: [1n, 1n] });
    await f.store.revoke(holdOf(Y, "s1"));
    await f.store.acquire(ask(Y, "s2"));
    expect(await f.store.acquireSet(askSet([X, Y], "s1"))).to.deep.include({ kind: "queued", index: 1 });
    expect((await f.store.describe(X)).waiters).to.deep.equal([]);
    await f.store.release(holdOf(Y, "s2"), false);
    expect(await f.store.acquireSet(askSet([X, Y], "s1"))).to.deep.equal({ kind: "granted", tokens: [1n, 3n] });
    expect((await f.store.describe(X)).holders.map((h) => [h.token, h.count])).to.deep.equal([[1n, 1]]);
  });

  f.it("answers busy when it may not wait, leaving nothing queued", async () => {
    await f.store.acquire(ask(Y, "s0"));
    expect(await f.store.acquireSet(askSet([X, Y], "s1", { mayWait: false }))).to.deep.equal({
      kind: "busy",
      index: 1,
    });
    expect((await f.store.describe(X)).waiters).to.deep.equal([]);
    expect((await f.store.describe(Y)).waiters).to.deep.equal([]);
  });

  f.it("refuses a name the owner already holds (held) and a SHARED limit other than the one in force", async () => {
    await f.store.acquire(ask(Y, "s1", { requestId: "r0" }));
    expect(await f.store.acquireSet(askSet([X, Y], "s1"))).to.deep.equal({ kind: "held", index: 1 });
    await f.store.acquire(askShared(Z, "s2", 3));
    const shared = { name: Z, mode: "shared" as const, limit: 2 };
    expect(await f.store.acquireSet(askSet([X, shared], "s3"))).to.deep.equal({
      kind: "conflict",
      index: 1,
      limitInForce: 3,
    });
  });

  f.it("grants a SHARED member next to shared holders", async () => {
    await f.store.acquire(askShared(X, "s0", 0));
    const shared = { name: X, mode: "shared" as const, limit: 0 };
    expect(await f.store.acquireSet(askSet([shared, Y], "s1"))).to.deep.include({ kind: "granted" });
    expect((await f.store.describe(X)).holders).to.have.length(2);
  });

  f.it("is withdrawn from every name by a withdrawal per name, and a raced grant is released", async () => {
    await f.store.acquire(ask(Y, "s0"));
    await f.store.acquireSet(askSet([X, Y], "s1"));
    for (const name of [X, Y]) {
      expect(await f.store.withdraw(waiterOf(name, "s1", "set"), "cancel")).to.deep.equal({ kind: "withdrawn" });
    }
    await f.store.release(holdOf(Y, "s0"), false);
    expect(f.listener.setRetries).to.deep.equal([]);
    const granted = await f.store.acquireSet(askSet([X, Y], "s2"));
    expect(granted).to.deep.include({ kind: "granted" });
    for (const name of [X, Y]) {
      expect(await f.store.withdraw(waiterOf(name, "s2", "set"), "cancel")).to.deep.equal({ kind: "grant-released" });
    }
    expect((await f.store.describe(X)).holders).to.deep.equal([]);
  });

  f.it("is not granted while a lock-delay is in force on one of its names", async () => {
    await f.store.acquire(ask(X, "s0", { lockDelayMs: 30_000 }));
    await f.store.revoke(holdOf(X, "s0"));
    expect(await f.store.acquireSet(askSet([Y, X], "s1", { mayWait: false }))).to.deep.equal({
      kind: "busy",
      index: 1,
    });
    expect(await f.store.acquireSet(askSet([Y, X], "s1"))).to.deep.include({ kind: "queued", index: 1 });
    expect((await f.store.describe(Y)).holders).to.deep.equal([]);
  });

  f.it("renews its entry on each name like a plain waiter's", async () => {
    await f.store.acquire(ask(X, "s0"));
    await f.store.acquireSet(askSet([X, Y], "s1"));
    for (const name of [X, Y]) {
      const outcome = await renewOne(f.store, name, "s1", 60_000, [], [waiterOf(name, "s1", "set")]);
      expect(outcome.waiters, name).to.deep.equal(["queued"]);
      expect((await f.store.describe(name)).waiters[0].leaseMs, name).to.be.above(45_000);
    }
  });

  f.it("gives each hold of a set its lock-delay: revoked, only its name is delayed; released, none", async () => {
    const locks = [delayed(X, 30_000), delayed(Y, 30_000), delayed(Z, 0)];
    expect(await f.store.acquireSet(askSet(locks, "s1"))).to.deep.include({ kind: "granted" });
    expect(await f.store.revoke(holdOf(X, "s1"))).to.deep.include({ kind: "revoked" });
    expect((await f.store.describe(X)).delayMs).to.be.within(1, 30_000);
    expect(await f.store.acquire(ask(X, "s2", { mayWait: false })))
      .to.include({ kind: "busy" })
      .and.have.property("delayMs")
      .within(1, 30_000);
    // Y's hold ends clean (released), Z's has no delay: both hand on at once.
    await f.store.release(holdOf(Y, "s1"), false);
    await f.store.revoke(holdOf(Z, "s1"));
    for (const name of [Y, Z]) {
      expect((await f.store.describe(name)).delayMs, name).to.equal(undefined);
      expect(await f.store.acquire(ask(name, "s2", { mayWait: false })), name).to.deep.include({ kind: "granted" });
    }
  });

  f.it(
    "delays the name of an expired set hold from its lease's end, and only the names it has a delay for",
    async () => {
      const locks = [delayed(X, 30_000), delayed(Y, 0)];
      await f.store.acquireSet(askSet(locks, "s1", { ttlMs: SHORT_TTL }));
      await until(async () => {
        for (const name of [X, Y]) await f.store.check(name, []);
        return (await f.store.describe(X)).holders.length + (await f.store.describe(Y)).holders.length === 0;
      }, "the set's leases to end");
      expect((await f.store.describe(X)).delayMs).to.be.within(1, 30_000);
      expect(await f.store.acquire(ask(X, "s2", { mayWait: false })))
        .to.include({ kind: "busy" })
        .and.have.property("delayMs")
        .within(1, 30_000);
      expect((await f.store.describe(Y)).delayMs).to.equal(undefined);
      expect(await f.store.acquire(ask(Y, "s2", { mayWait: false }))).to.deep.include({ kind: "granted" });
    },
  );

  f.it("forgets a lock's last transfer when it takes an idle lock: the old token's re-run is not held", async () => {
    const first = await f.store.acquire(ask(X, "s1"));
    if (first.kind !== "granted") expect.fail(`s1 was not granted: ${first.kind}`);
    await f.store.acquire(ask(X, "s2", { requestId: "r2", ttlMs: SHORT_TTL }));
    const rerun = { ...holdOf(X, "s1"), token: first.token, toSessionId: "", toOwner: "" };
    expect(await f.store.transfer(rerun)).to.deep.include({ kind: "transferred" });
    // Describe changes nothing: the lease ends with no operation on the lock before the set's.
    await until(async () => (await f.store.describe(X)).holders.length === 0, "the successor's lease to end");
    expect(await f.store.acquireSet(askSet([X, Y], "s3"))).to.deep.include({ kind: "granted" });
    expect(await f.store.transfer(rerun)).to.deep.equal({ kind: "not-held" });
  });
}

/** An exclusive set member of `name` whose hold gets `lockDelayMs` (0: none). */
function delayed(name: string, lockDelayMs: number): SetMember {
  return { name, mode: "exclusive", limit: 0, lockDelayMs };
}
