import { expect } from "chai";
import type { CheckOutcome, Claim } from "../../../server/store/store.js";
import { until } from "../../harness/until.js";
import { ask, askShared, holdOf, LONG_TTL, SHORT_TTL, waiterOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";
import { passTime } from "./wait-for.js";

/** A lock-delay long enough to see, short enough to wait out. */
const DELAY_MS = 400;

/** A try-once during a lock-delay is BUSY and says how long the delay has left (what describe shows). */
function expectDelayedBusy(outcome: unknown): void {
  expect(outcome).to.have.keys("kind", "delayMs");
  const { kind, delayMs } = outcome as { kind: string; delayMs: number };
  expect(kind).to.equal("busy");
  expect(delayMs).to.be.within(1, DELAY_MS);
}

/**
 * Lock-delay: after a hold with a delay ends without a release (expired, revoked) nobody is granted the
 * lock until the delay has passed; a release hands on at once. Scripts: includes/delay.lua.
 */
export function lockDelayConformance(f: ConformanceFixture): void {
  async function checkUntil(name: string, waiters: Claim[], done: (c: CheckOutcome) => boolean) {
    let outcome: CheckOutcome | undefined;
    await until(async () => {
      outcome = await f.store.check(name, waiters);
      return done(outcome);
    }, `check of ${name}`);
    return outcome!;
  }

  /** Re-checks "a" (as a coordinator would) until its holder's lease has ended; returns the delay's ms left. */
  async function untilDelayed(): Promise<number> {
    let delayMs: number | undefined;
    await until(async () => {
      await f.store.check("a", []);
      const state = await f.store.describe("a");
      delayMs = state.delayMs;
      return state.holders.length === 0 && delayMs !== undefined;
    }, "the holder's lease to end and the lock-delay to start");
    return delayMs ?? 0;
  }

  f.it(
    "delays the lock after an expired hold: try-once busy, the waiter queued until the check at its end",
    async () => {
      await f.store.acquire(ask("a", "s1", { ttlMs: SHORT_TTL, lockDelayMs: DELAY_MS }));
      await f.store.acquire(ask("a", "s2"));
      const waiter = waiterOf("a", "s2");
      const expired = await checkUntil("a", [waiter], (c) => c.recheckInMs > SHORT_TTL);
      // The holder is gone, the waiter still queued, and the next re-check falls due at the delay's end.
      expect(expired.statuses).to.deep.equal([{ kind: "queued" }]);
      expect(expired.recheckInMs).to.be.within(1, DELAY_MS);
      expectDelayedBusy(await f.store.acquire(ask("a", "s3", { mayWait: false })));
      const state = await f.store.describe("a");
      expect(state.holders).to.deep.equal([]);
      expect(state.delayMs).to.be.within(1, DELAY_MS);
      const granted = await checkUntil("a", [waiter], (c) => c.statuses[0].kind !== "queued");
      expect(granted.statuses).to.deep.equal([{ kind: "granted", token: 2n }]);
      expect((await f.store.describe("a")).delayMs).to.equal(undefined);
    },
  );

  f.it("delays the lock after a revoke, granting the waiter nobody until the delay has passed", async () => {
    await f.store.acquire(ask("a", "s1", { lockDelayMs: DELAY_MS }));
    await f.store.acquire(ask("a", "s2"));
    expect(await f.store.revoke(holdOf("a", "s1"))).to.deep.equal({ kind: "revoked", token: 1n, holdCount: 1 });
    expect(f.listener.grants).to.deep.equal([]);
    expect((await f.store.describe("a")).delayMs).to.be.within(1, DELAY_MS);
    const queued = await f.store.check("a", [waiterOf("a", "s2")]);
    expect(queued.statuses).to.deep.equal([{ kind: "queued" }]);
    await checkUntil("a", [waiterOf("a", "s2")], (c) => c.statuses[0].kind === "granted");
    expect(f.listener.grants).to.deep.equal([{ name: "a", sessionId: "s2", requestId: "r", token: 2n }]);
  });

  f.it("hands on at once after a release, whatever the hold's lock-delay", async () => {
    await f.store.acquire(ask("a", "s1", { lockDelayMs: DELAY_MS }));
    await f.store.acquire(ask("a", "s2"));
    await f.store.release(holdOf("a", "s1"), false);
    expect(f.listener.grants).to.deep.equal([{ name: "a", sessionId: "s2", requestId: "r", token: 2n }]);
    expect((await f.store.describe("a")).delayMs).to.equal(undefined);
  });

  f.it("keeps the delay of a lock nobody holds or waits for, and ends it by itself", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: SHORT_TTL, lockDelayMs: DELAY_MS }));
    expect(await untilDelayed()).to.be.within(1, DELAY_MS);
    expectDelayedBusy(await f.store.acquire(ask("a", "s2", { mayWait: false })));
    await passTime(f.store, DELAY_MS);
    expect(await f.store.acquire(ask("a", "s2", { mayWait: false }))).to.deep.equal({
      kind: "granted",
      token: 2n,
      holdCount: 1,
    });
  });

  f.it("gives a waiter's lock-delay to the hold it becomes", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { lockDelayMs: DELAY_MS }));
    await f.store.release(holdOf("a", "s1"), false);
    await f.store.revoke(holdOf("a", "s2"));
    expect((await f.store.describe("a")).delayMs).to.be.within(1, DELAY_MS);
    expectDelayedBusy(await f.store.acquire(ask("a", "s3", { mayWait: false })));
  });

  f.it("lists a delayed lock nobody holds, with the delay", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: SHORT_TTL, lockDelayMs: LONG_TTL }));
    await untilDelayed();
    const page = await f.store.list("", 10, "");
    expect(page).to.not.equal("invalid-token");
    const [summary] = (page as Exclude<typeof page, string>).locks;
    expect(summary).to.include({ name: "a", holders: 0, waiters: 0, mode: undefined });
    expect(summary.delayMs).to.be.within(1, LONG_TTL);
  });

  f.it(
    "lists the shared hold left beside a lock-delay that has passed as shared, before anything purges it",
    async () => {
      await f.store.acquire(askShared("a", "s1", 0, { lockDelayMs: DELAY_MS }));
      await f.store.acquire(askShared("a", "s2", 0));
      await f.store.revoke(holdOf("a", "s1"));
      await passTime(f.store, DELAY_MS);
      const page = await f.store.list("", 10, "");
      expect(page).to.not.equal("invalid-token");
      const summary = (page as Exclude<typeof page, string>).locks.find((l) => l.name === "a");
      expect(summary).to.deep.equal({ name: "a", mode: "shared", limit: 0, holders: 1, waiters: 0 });
    },
  );
}
