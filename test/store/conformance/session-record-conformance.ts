import { expect } from "chai";
import { ask, SHORT_TTL } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";
import { passTime } from "./wait-for.js";

const RECORD = { sessionId: "0f0f", secretHash: "ab".repeat(32), ttlMs: 60_000, clientName: "worker/1" };

/** The renewal of session 0f0f's hold on `name` (owner "o"), touching its record when `touchSession`. */
const renewal = (touchSession: boolean, name = "a") => ({
  sessionId: "0f0f",
  ttlMs: 20_000,
  locks: [{ name, owners: ["o"], waiters: [] }],
  ...(touchSession && { touchSession }),
});
const renewedHold = { holds: [{ token: 1n, count: 1 }], waiters: [] };

/** Session records: what any coordinator reads back to resume a session, its owner's identity included. */
export function sessionRecordConformance(f: ConformanceFixture): void {
  f.it("reads back the record as saved, with the identity that opened the session", async () => {
    await f.store.saveSession({ ...RECORD, identity: "spiffe://corp/billing" });
    await f.store.saveSession({ ...RECORD, sessionId: "1e1e" });
    expect(await f.store.loadSession("0f0f")).to.deep.equal({ ...RECORD, identity: "spiffe://corp/billing" });
    expect((await f.store.loadSession("1e1e"))?.identity ?? "").to.equal("");
    expect(await f.store.loadSession("2d2d")).to.equal(undefined);
  });

  f.itWithTwoStores("shows a record saved through one store to another, identity included", async () => {
    const other = await f.open();
    await f.store.saveSession({ ...RECORD, identity: "billing-svc" });
    expect((await other.store.loadSession("0f0f"))?.identity).to.equal("billing-svc");
    await other.store.deleteSession("0f0f");
    expect(await f.store.loadSession("0f0f")).to.equal(undefined);
  });

  f.it("is touched by a renewal asked to (touchSession): its expiry pushed to the renewal's ttl, alive", async () => {
    await f.store.saveSession({ ...RECORD, ttlMs: 5 * SHORT_TTL });
    await f.store.acquire(ask("a", "0f0f", { ttlMs: 1_000 }));
    expect(await f.store.renew(renewal(true))).to.deep.equal({ locks: [renewedHold], sessionAlive: true });
    await passTime(f.store, 5 * SHORT_TTL);
    expect(await f.store.loadSession("0f0f")).to.deep.equal({ ...RECORD, ttlMs: 5 * SHORT_TTL });
  });

  f.it("is answered not alive by a touching renewal once expired, and not created again; the locks renew", async () => {
    await f.store.saveSession({ ...RECORD, ttlMs: SHORT_TTL });
    await f.store.acquire(ask("a", "0f0f", { ttlMs: 1_000 }));
    await passTime(f.store, SHORT_TTL);
    expect(await f.store.renew(renewal(true))).to.deep.equal({ locks: [renewedHold], sessionAlive: false });
    expect(await f.store.loadSession("0f0f")).to.equal(undefined);
    expect((await f.store.check("a", [])).recheckInMs).to.be.within(10_000, 20_000);
  });

  f.it("is touched by a touching renewal of no lock, and left alone by a renewal not asked to", async () => {
    await f.store.saveSession({ ...RECORD, sessionId: "1e1e", ttlMs: 5 * SHORT_TTL });
    await f.store.saveSession({ ...RECORD, ttlMs: 5 * SHORT_TTL });
    await f.store.acquire(ask("a", "0f0f", { ttlMs: 1_000 }));
    const alone = await f.store.renew({ sessionId: "1e1e", ttlMs: 20_000, locks: [], touchSession: true });
    expect(alone).to.deep.equal({ locks: [], sessionAlive: true });
    expect(await f.store.renew(renewal(false))).to.deep.equal({ locks: [renewedHold] });
    await passTime(f.store, 5 * SHORT_TTL);
    expect(await f.store.loadSession("1e1e")).to.include({ sessionId: "1e1e" });
    expect(await f.store.loadSession("0f0f")).to.equal(undefined);
  });
}
