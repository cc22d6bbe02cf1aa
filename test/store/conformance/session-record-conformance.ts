import { expect } from "chai";
import type { ConformanceFixture } from "./conformance-fixture.js";

const RECORD = { sessionId: "0f0f", secretHash: "ab".repeat(32), ttlMs: 60_000, clientName: "worker/1" };

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
}
