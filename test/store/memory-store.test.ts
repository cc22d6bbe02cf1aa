import { createHash } from "node:crypto";
import { expect } from "chai";
import { MemoryStore } from "../../server/store/memory/memory-store.js";
import type { AcquireArgs } from "../../server/store/store.js";
import { RecordingListener } from "../harness/recording-listener.js";

const DAY_MS = 86_400_000;

/** A clock the test moves by hand. */
class ManualClock {
  nowMs = 0;
  readonly read = () => this.nowMs;
}

function ask(name: string, sessionId: string, ttlMs = 10_000): AcquireArgs {
  return { name, sessionId, owner: "o", requestId: "r", ttlMs, mode: "exclusive", limit: 0, mayWait: false };
}

// Behaviour the conformance suite cannot reach on both stores: the embedded store's clock and
// the retention of its fencing counters. The shared semantics are in test/store/conformance.
describe("MemoryStore", () => {
  let clock: ManualClock;
  let store: MemoryStore;
  const open = async (fenceRetainMs?: number) => {
    store = new MemoryStore({ fenceRetainMs, clock: clock.read });
    await store.start(new RecordingListener());
  };
  const tokenOf = async (name: string, sessionId: string, ttlMs?: number) => {
    const outcome = await store.acquire(ask(name, sessionId, ttlMs));
    return outcome.kind === "granted" ? outcome.token : outcome.kind;
  };
  beforeEach(() => {
    clock = new ManualClock();
  });
  afterEach(() => store.close());

  it("ends a lease when the injected clock reaches its deadline, not before", async () => {
    await open();
    await store.acquire(ask("a", "s1", 1_000));
    clock.nowMs = 999;
    expect(await store.acquire(ask("a", "s2"))).to.deep.equal({ kind: "busy" });
    clock.nowMs = 1_000;
    expect(await tokenOf("a", "s2")).to.equal(2n);
  });

  it("keeps an idle counter for 30 days by default, and forgets it after", async () => {
    await open();
    await tokenOf("a", "s1");
    await store.release({ name: "a", sessionId: "s1", owner: "o" }, false);
    clock.nowMs = 30 * DAY_MS;
    expect(await tokenOf("a", "s2")).to.equal(2n);
    await store.release({ name: "a", sessionId: "s2", owner: "o" }, false);
    clock.nowMs = 60 * DAY_MS + 1;
    expect(await tokenOf("a", "s3")).to.equal(1n);
  });

  it("retains a counter from the end of its lock, however long the lock was held", async () => {
    await open(1_000);
    await tokenOf("a", "s1", 60_000);
    clock.nowMs = 50_000;
    await store.release({ name: "a", sessionId: "s1", owner: "o" }, false);
    clock.nowMs = 51_000;
    expect(await tokenOf("a", "s2")).to.equal(2n);
  });

  it("forgets an abandoned lock once an operation notices it, and its counter retainMs later", async () => {
    await open(1_000);
    await tokenOf("a", "s1", 5_000);
    await tokenOf("b", "s1", 5_000);
    clock.nowMs = 6_000; // both leases ended at 5 000; this operation notices
    await store.check("elsewhere", []);
    clock.nowMs = 6_900;
    expect(await tokenOf("a", "s2")).to.equal(2n);
    clock.nowMs = 7_001;
    expect(await tokenOf("b", "s2")).to.equal(1n);
  });

  it("refuses a negative fenceRetainMs", () => {
    expect(() => new MemoryStore({ fenceRetainMs: -1 })).to.throw(RangeError);
    store = new MemoryStore();
  });

  it("refuses a List page token naming a lock outside the prefix (tokens are not signed)", async () => {
    await open();
    await store.acquire(ask("secret/db-master", "s1"));
    await store.acquire(ask("pub/a", "s1"));
    const digest = createHash("sha256").update("pub/").digest("base64url").slice(0, 12);
    const forged = Buffer.from(JSON.stringify(["secret/", digest])).toString("base64url");
    expect(await store.list("pub/", 10, forged)).to.equal("invalid-token");
  });
});
