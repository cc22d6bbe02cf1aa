import { expect } from "chai";
import type { HeldWait } from "../../../server/store/wait-registry.js";
import type { ConformanceFixture } from "./conformance-fixture.js";

/** A hold-and-wait entry of session `sessionId` waiting for `name`. */
function heldWait(sessionId: string, name: string, queuedAtMs = 1_000): HeldWait {
  return {
    sessionId,
    owner: `${sessionId}-owner`,
    requestId: `${sessionId}-r1`,
    name,
    mode: "exclusive",
    clientName: `client of ${sessionId}`,
    coordinatorId: "c1",
    queuedAtMs,
  };
}

const byName = (ws: HeldWait[]) => [...ws].sort((a, b) => a.name.localeCompare(b.name));

/** The wait registry deadlock detection reads: put, refresh, expiry and removal, shared by every store. */
export function waitRegistryConformance(f: ConformanceFixture): void {
  f.it("lists what was put, field for field, until it is removed", async () => {
    const [a, b] = [heldWait("s1", "x"), heldWait("s2", "y")];
    const now = Date.now();
    await f.store.waits.put([a, b], now + 60_000);
    expect(byName(await f.store.waits.list(now))).to.deep.equal([a, b]);
    await f.store.waits.remove([a]);
    expect(await f.store.waits.list(now)).to.deep.equal([b]);
  });

  f.it("lists nothing once an entry's expiry has passed, unless a put pushed it", async () => {
    const [a, b] = [heldWait("s1", "x"), heldWait("s2", "y")];
    const now = Date.now();
    await f.store.waits.put([a, b], now + 1_000);
    await f.store.waits.put([{ ...b }], now + 5_000);
    expect(await f.store.waits.list(now + 2_000)).to.deep.equal([b]);
  });

  f.it("lists nothing when nothing was put, and removing what is not there changes nothing", async () => {
    await f.store.waits.remove([heldWait("s9", "z")]);
    expect(await f.store.waits.list(Date.now())).to.deep.equal([]);
  });

  it("shows every store (coordinator) the entries of the others", async function () {
    if (f.setup.singleStore) this.skip();
    const other = await f.open();
    const now = Date.now();
    await f.store.waits.put([heldWait("s1", "x")], now + 60_000);
    await other.store.waits.put([heldWait("s2", "y")], now + 60_000);
    expect(byName(await other.store.waits.list(now)).map((w) => w.sessionId)).to.deep.equal(["s1", "s2"]);
    expect(byName(await f.store.waits.list(now)).map((w) => w.sessionId)).to.deep.equal(["s1", "s2"]);
  });
}
