import { acquireConformance } from "./acquire-conformance.js";
import { checkConformance } from "./check-conformance.js";
import { ConformanceFixture, type ConformanceSetup, type MakeStore } from "./conformance-fixture.js";
import { fencingConformance } from "./fencing-conformance.js";
import { handoverConformance } from "./handover-conformance.js";
import { lifecycleConformance } from "./lifecycle-conformance.js";
import { listConformance } from "./list-conformance.js";
import { lockDelayConformance } from "./lock-delay-conformance.js";
import { releaseConformance } from "./release-conformance.js";
import { renewConformance } from "./renew-conformance.js";
import { sessionRecordConformance } from "./session-record-conformance.js";
import { setConformance } from "./set-conformance.js";
import { sharedConformance } from "./shared-conformance.js";
import { waitAttributionConformance } from "./wait-attribution-conformance.js";
import { waitRegistryConformance } from "./wait-registry-conformance.js";
import { watchConformance } from "./watch-conformance.js";
import { withdrawConformance } from "./withdraw-conformance.js";

/**
 * Registers the store conformance suite for one backend: the same tests, through the Store
 * interface only, for every store. `makeStore` makes a new store on the backend; `setup` starts
 * and cleans the backend and names what it cannot do.
 */
export function storeConformance(name: string, makeStore: MakeStore, setup: ConformanceSetup = {}): void {
  describe(`Store conformance (${name})`, () => {
    const f = new ConformanceFixture(makeStore, setup);
    before(async () => setup.before?.());
    beforeEach(async () => {
      await setup.beforeEach?.();
      await f.openDefault();
    });
    afterEach(() => f.closeAll());
    after(async () => setup.after?.());

    describe("acquire", () => acquireConformance(f));
    describe("release", () => releaseConformance(f));
    describe("withdraw", () => withdrawConformance(f));
    describe("check", () => checkConformance(f));
    describe("renew", () => renewConformance(f));
    describe("shared locks", () => sharedConformance(f));
    describe("acquire-sets", () => setConformance(f));
    describe("fencing tokens", () => fencingConformance(f));
    describe("store lifecycle", () => lifecycleConformance(f));
    describe("describe, watch, proclaim and revoke", () => watchConformance(f));
    describe("list", () => listConformance(f));
    describe("wait attribution", () => waitAttributionConformance(f));
    describe("session records", () => sessionRecordConformance(f));
    describe("wait registry (deadlock detection)", () => waitRegistryConformance(f));
    describe("lock-delay", () => lockDelayConformance(f));
    describe("hand-over: transfer, release requests, priority", () => handoverConformance(f));
  });
}
