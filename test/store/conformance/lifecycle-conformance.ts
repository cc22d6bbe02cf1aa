import { expect } from "chai";
import { StoreUnavailableError } from "../../../server/store/store-unavailable-error.js";
import { ask, holdOf, waiterOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";

/** The store as a whole: its coordinator id, several stores on one backend, and close. */
export function lifecycleConformance(f: ConformanceFixture): void {
  f.it("has a coordinator id of its own", async () => {
    const other = await f.open();
    expect(f.store.coordinatorId).to.be.a("string").that.is.not.empty;
    expect(other.store.coordinatorId).to.not.equal(f.store.coordinatorId);
  });

  f.itWithTwoStores("hands a lock to a waiter of another store, whose listener alone hears the grant", async () => {
    const other = await f.open();
    await f.store.acquire(ask("a", "s1"));
    expect(await other.store.acquire(ask("a", "s2", { requestId: "r2" }))).to.include({
      kind: "queued",
      position: 1,
    });
    await f.store.release(holdOf("a", "s1"), false);
    await other.listener.until(() => other.listener.grants.length > 0, "the other store's grant");
    expect(other.listener.grants).to.deep.equal([{ name: "a", sessionId: "s2", requestId: "r2", token: 2n }]);
    expect(f.listener.grants).to.deep.equal([]);
  });

  f.itWithTwoStores("reports through one store the grant another store's release made", async () => {
    const other = await f.open();
    await f.store.acquire(ask("a", "s1"));
    await other.store.acquire(ask("a", "s2"));
    await f.store.release(holdOf("a", "s1"), false);
    expect((await other.store.check("a", [waiterOf("a", "s2")])).statuses).to.deep.equal([
      { kind: "granted", token: 2n },
    ]);
  });

  f.it("rejects every operation with StoreUnavailableError once closed", async () => {
    const { store } = await f.open();
    await store.close();
    const attempts: Promise<unknown>[] = [
      store.acquire(ask("a", "s1")),
      store.release(holdOf("a", "s1"), false),
      store.withdraw(waiterOf("a", "s1"), "cancel"),
      store.check("a", []),
      store.renew({ sessionId: "s1", ttlMs: 1_000, locks: [{ name: "a", owners: ["o"], waiters: [] }] }),
    ];
    for (const attempt of attempts) {
      const error = await attempt.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(StoreUnavailableError);
    }
  });
}
