import { expect } from "chai";
import type { LockEvent } from "../../../server/store/store.js";
import { ask, askShared, holdOf, SHORT_TTL, waiterOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";
import { passTime } from "./wait-for.js";

/** Describe and watched holder changes: versions, order, values, expiry and the "no holder" count. */
export function watchConformance(f: ConformanceFixture): void {
  const text = (value: Uint8Array) => Buffer.from(value).toString();
  /** The listener's changes of `name`, once there are `n`, as "change holder left value". */
  async function changes(n: number, name = "a"): Promise<LockEvent[]> {
    const of = () => f.listener.events.filter((e) => e.name === name);
    await f.listener.until(() => of().length >= n, `${n} changes of ${name}`);
    return of();
  }
  const brief = (e: LockEvent) =>
    `${e.change} ${e.holder.sessionId}:${e.holder.owner} ${e.holdersLeft} ${text(e.holder.value)}`;

  f.it("describes a lock never used as version 0 with no holders, waiters or limit", async () => {
    expect(await f.store.describe("a")).to.deep.equal({
      name: "a",
      version: 0n,
      limit: undefined,
      holders: [],
      waiters: [],
    });
  });

  f.it("describes holders in grant order with values and lease left, and waiters in queue order", async () => {
    const value = new Uint8Array([0, 10, 255]);
    await f.store.acquire(askShared("a", "s1", 2, { value }));
    await f.store.acquire(askShared("a", "s2", 2, { requestId: "r2", owner: "w", value: Buffer.from("two") }));
    await f.store.acquire(ask("a", "s3", { requestId: "r3" }));
    await f.store.acquire(askShared("a", "s4", 2, { requestId: "r4" }));
    const state = await f.store.describe("a");
    expect(state.limit).to.equal(2);
    expect(state.holders.map(({ leaseMs, heldMs, value, ...h }) => ({ ...h, value: text(value) }))).to.deep.equal([
      { sessionId: "s1", owner: "o", token: 1n, count: 1, mode: "shared", value: text(value) },
      { sessionId: "s2", owner: "w", token: 2n, count: 1, mode: "shared", value: "two" },
    ]);
    expect([...state.holders[0].value]).to.deep.equal([0, 10, 255]);
    expect(state.holders[0].leaseMs).to.be.within(20_000, 30_000);
    expect(state.waiters.map(({ leaseMs, waitedMs, ...w }) => w)).to.deep.equal([
      { sessionId: "s3", owner: "o", requestId: "r3", position: 1, mode: "exclusive", priority: 0 },
      { sessionId: "s4", owner: "o", requestId: "r4", position: 2, mode: "shared", priority: 0 },
    ]);
  });

  f.it("leaves out of a description the holders and waiters whose lease ended", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: SHORT_TTL }));
    await f.store.acquire(ask("a", "s2", { ttlMs: SHORT_TTL }));
    await passTime(f.store, SHORT_TTL);
    const state = await f.store.describe("a");
    expect([state.holders, state.waiters]).to.deep.equal([[], []]);
  });

  f.it("passes a watched lock's changes in order, each version one more than the last, with holders left", async () => {
    await f.store.watch("a");
    await f.store.acquire(ask("a", "s1", { value: Buffer.from("one") }));
    await f.store.acquire(ask("a", "s2", { value: Buffer.from("two") }));
    await f.store.release(holdOf("a", "s1"), false);
    const seen = await changes(3);
    expect(seen.map(brief)).to.deep.equal(["acquired s1:o 1 one", "released s1:o 0 one", "acquired s2:o 1 two"]);
    expect(seen.map((e) => e.version - seen[0].version)).to.deep.equal([0n, 1n, 2n]);
    expect(seen.map((e) => e.holder.token)).to.deep.equal([1n, 1n, 2n]);
    expect((await f.store.describe("a")).version).to.equal(seen[2].version);
  });

  f.it("passes an expiry, with no holder left, when an operation purges a holder whose lease ended", async () => {
    await f.store.watch("a");
    await f.store.acquire(ask("a", "s1", { ttlMs: SHORT_TTL }));
    await passTime(f.store, SHORT_TTL);
    await f.store.check("a", []);
    expect((await changes(2)).map(brief)).to.deep.equal(["acquired s1:o 1 ", "expired s1:o 0 "]);
  });

  f.it("passes nothing of a lock not watched, or no longer watched", async () => {
    await f.store.watch("b");
    await f.store.acquire(ask("a", "s1"));
    await f.store.unwatch("b");
    await f.store.acquire(ask("b", "s1"));
    await f.store.watch("c");
    await f.store.acquire(ask("c", "s1"));
    await changes(1, "c");
    expect(f.listener.events.map((e) => e.name)).to.deep.equal(["c"]);
  });

  f.it("proclaims a live hold's value: described, and passed on as a value change", async () => {
    await f.store.watch("a");
    await f.store.acquire(ask("a", "s1", { value: Buffer.from("old") }));
    expect(await f.store.proclaim(holdOf("a", "s1"), Buffer.from("new"))).to.equal("proclaimed");
    expect(text((await f.store.describe("a")).holders[0].value)).to.equal("new");
    expect((await changes(2)).map(brief)).to.deep.equal(["acquired s1:o 1 old", "value s1:o 1 new"]);
  });

  f.it("answers not-held to a proclaim by a non-holder, a waiter, or a holder whose lease ended", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: SHORT_TTL }));
    await f.store.acquire(ask("a", "s2"));
    expect(await f.store.proclaim(holdOf("a", "s9"), Buffer.from("x"))).to.equal("not-held");
    expect(await f.store.proclaim(holdOf("a", "s2"), Buffer.from("x"))).to.equal("not-held");
    await passTime(f.store, SHORT_TTL);
    expect(await f.store.proclaim(holdOf("a", "s1"), Buffer.from("x"))).to.equal("not-held");
  });

  f.it("revokes a hold: every count of it, told to the listener, and the lock handed to the next waiter", async () => {
    await f.store.watch("a");
    await f.store.acquire(ask("a", "s1", { requestId: "r1" }));
    await f.store.acquire(ask("a", "s1", { requestId: "r2" }));
    await f.store.acquire(ask("a", "s2", { requestId: "r3" }));
    expect(await f.store.revoke(holdOf("a", "s1"))).to.deep.equal({ kind: "revoked", token: 1n, holdCount: 2 });
    // Told before revoke() resolves, so before the hand-off to this store's own waiter (the broadcast may repeat it).
    expect(f.listener.revocations[0]).to.deep.equal({ name: "a", sessionId: "s1", owner: "o", token: 1n });
    await f.listener.until(() => f.listener.grants.length > 0, "the hand-off");
    expect(f.listener.grants).to.deep.equal([{ name: "a", sessionId: "s2", requestId: "r3", token: 2n }]);
    expect((await changes(3)).map(brief)).to.deep.equal(["acquired s1:o 1 ", "revoked s1:o 0 ", "acquired s2:o 1 "]);
  });

  f.it("answers not-held to a revoke of a hold that does not exist, and revokes nothing", async () => {
    await f.store.acquire(ask("a", "s1"));
    expect(await f.store.revoke(holdOf("a", "s1", "other"))).to.deep.equal({ kind: "not-held" });
    expect(await f.store.revoke(holdOf("free", "s1"))).to.deep.equal({ kind: "not-held" });
    expect((await f.store.check("a", [waiterOf("a", "s1")])).statuses).to.deep.equal([{ kind: "granted", token: 1n }]);
    expect(f.listener.revocations).to.deep.equal([]);
  });

  f.itWithTwoStores("passes changes made through another store, and its revocations", async () => {
    const other = await f.open();
    await f.store.watch("a");
    await other.store.acquire(ask("a", "s1"));
    await other.store.revoke(holdOf("a", "s1"));
    expect((await changes(2)).map(brief)).to.deep.equal(["acquired s1:o 1 ", "revoked s1:o 0 "]);
    await f.listener.until(() => f.listener.revocations.length > 0, "the revocation");
    await other.listener.until(() => other.listener.revocations.length > 0, "the revocation on the other store");
  });
}
