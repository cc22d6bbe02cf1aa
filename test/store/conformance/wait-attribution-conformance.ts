import { expect } from "chai";
import { ask, holdOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";
import { passTime } from "./wait-for.js";

/**
 * How long holders have held and waiters have waited, on the store's clock, as Describe reports
 * it. Each test compares entries of one describe (one clock reading), so the load on the machine
 * cannot blur the GAP_MS that separates them (1 ms of slack for rounding to whole ms).
 */
export function waitAttributionConformance(f: ConformanceFixture): void {
  const GAP_MS = 150;
  const atLeastGap = (longer: number | undefined, shorter: number | undefined) =>
    expect((longer ?? Number.NaN) - (shorter ?? Number.NaN)).to.be.at.least(GAP_MS - 1);

  f.it("describes how long each holder has held the lock, kept across a re-entry", async () => {
    await f.store.acquire(ask("a", "s1"));
    await passTime(f.store, GAP_MS);
    await f.store.acquire(ask("a", "s1", { requestId: "r2" }));
    await f.store.acquire(ask("a", "s2"));
    const { holders, waiters } = await f.store.describe("a");
    expect(holders[0].count).to.equal(2);
    atLeastGap(holders[0].heldMs, waiters[0].waitedMs);
    expect(waiters[0].waitedMs).to.be.at.least(0);
  });

  f.it(
    "describes how long each waiter has waited since it first queued, kept when the acquire is re-sent",
    async () => {
      await f.store.acquire(ask("a", "s1"));
      await f.store.acquire(ask("a", "s2"));
      await passTime(f.store, GAP_MS);
      await f.store.acquire(ask("a", "s3"));
      await f.store.acquire(ask("a", "s2"));
      const { waiters } = await f.store.describe("a");
      expect(waiters.map((w) => w.sessionId)).to.deep.equal(["s2", "s3"]);
      atLeastGap(waiters[0].waitedMs, waiters[1].waitedMs);
    },
  );

  f.it("counts a handed-on holder's time from its grant, not from when it queued", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2"));
    await f.store.acquire(ask("a", "s3"));
    await passTime(f.store, GAP_MS);
    await f.store.release(holdOf("a", "s1"), false);
    const { holders, waiters } = await f.store.describe("a");
    expect([holders.map((h) => h.sessionId), waiters.map((w) => w.sessionId)]).to.deep.equal([["s2"], ["s3"]]);
    atLeastGap(waiters[0].waitedMs, holders[0].heldMs);
  });

  f.it("forgets a withdrawn waiter's queue time: queued again, it starts from zero", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2"));
    await passTime(f.store, GAP_MS);
    const claim = { name: "a", sessionId: "s2", owner: "o", requestId: "r" };
    expect((await f.store.withdraw(claim, "cancel")).kind).to.equal("withdrawn");
    await f.store.acquire(ask("a", "s2"));
    const { holders, waiters } = await f.store.describe("a");
    atLeastGap(holders[0].heldMs, waiters[0].waitedMs);
  });
}
