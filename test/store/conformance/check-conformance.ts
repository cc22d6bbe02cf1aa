import { expect } from "chai";
import type { CheckOutcome, Claim } from "../../../server/store/store.js";
import { until } from "../../harness/until.js";
import { ask, askShared, holdOf, LONG_TTL, SHORT_TTL, waiterOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";

/** Check: waiter statuses, the ms until the earliest lease ends, and hand-off after expiry. */
export function checkConformance(f: ConformanceFixture): void {
  /** Re-checks `name` until `done` holds for the answer, and returns that answer. */
  async function checkUntil(name: string, waiters: Claim[], done: (c: CheckOutcome) => boolean) {
    let outcome: CheckOutcome | undefined;
    await until(async () => {
      outcome = await f.store.check(name, waiters);
      return done(outcome);
    }, `check of ${name}`);
    return outcome!;
  }

  f.it("reports queued and gone waiters and the ms until the earliest holder lease ends", async () => {
    await f.store.acquire(askShared("a", "s1", 0, { ttlMs: LONG_TTL }));
    await f.store.acquire(askShared("a", "s2", 0, { ttlMs: 5_000 }));
    await f.store.acquire(ask("a", "x3"));
    const checked = await f.store.check("a", [waiterOf("a", "x3"), waiterOf("a", "s9")]);
    expect(checked.statuses).to.deep.equal([{ kind: "queued" }, { kind: "gone" }]);
    expect(checked.recheckInMs).to.be.within(1, 5_000);
  });

  f.it("reports the token of a waiter granted by a release", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2"));
    await f.store.release(holdOf("a", "s1"), false);
    const checked = await f.store.check("a", [waiterOf("a", "s2")]);
    expect(checked.statuses).to.deep.equal([{ kind: "granted", token: 2n }]);
    expect(checked.recheckInMs).to.be.within(1, LONG_TTL);
  });

  f.it("reports gone for a request other than the one granted, even with the holder's owner", async () => {
    await f.store.acquire(ask("a", "s1", { requestId: "r1" }));
    const checked = await f.store.check("a", [waiterOf("a", "s1", "r2"), waiterOf("a", "s1", "r1")]);
    expect(checked.statuses).to.deep.equal([{ kind: "gone" }, { kind: "granted", token: 1n }]);
  });

  f.it("answers -1 and gone for a lock nobody holds", async () => {
    expect(await f.store.check("free", [waiterOf("free", "s1")])).to.deep.equal({
      statuses: [{ kind: "gone" }],
      recheckInMs: -1,
    });
    expect(await f.store.check("free", [])).to.deep.equal({ statuses: [], recheckInMs: -1 });
  });

  f.it("hands the lock to the head waiter once the holder's lease has ended, and tells the listener", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: SHORT_TTL }));
    await f.store.acquire(ask("a", "s2", { requestId: "r2" }));
    await f.store.acquire(ask("a", "s3", { requestId: "r3" }));
    const waiters = [waiterOf("a", "s2", "r2"), waiterOf("a", "s3", "r3")];
    const checked = await checkUntil("a", waiters, (c) => c.statuses[0].kind !== "queued");
    expect(checked.statuses).to.deep.equal([{ kind: "granted", token: 2n }, { kind: "queued" }]);
    expect(checked.recheckInMs).to.be.within(1, LONG_TTL);
    expect(f.listener.grants).to.deep.equal([{ name: "a", sessionId: "s2", requestId: "r2", token: 2n }]);
  });

  f.it("reports a waiter whose queue lease ended as gone, and drops it from the queue", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { ttlMs: SHORT_TTL }));
    await checkUntil("a", [waiterOf("a", "s2")], (c) => c.statuses[0].kind === "gone");
    expect(await f.store.acquire(ask("a", "s3"))).to.include({ kind: "queued", position: 1 });
    await f.store.release(holdOf("a", "s1"), false);
    expect(f.listener.grants).to.deep.equal([{ name: "a", sessionId: "s3", requestId: "r", token: 2n }]);
  });

  f.it("forgets a lock whose last lease ended: -1, and the next claim is granted at once", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: SHORT_TTL }));
    await checkUntil("a", [], (c) => c.recheckInMs === -1);
    expect(await f.store.acquire(ask("a", "s2", { mayWait: false }))).to.deep.equal({
      kind: "granted",
      token: 2n,
      holdCount: 1,
    });
  });
}
