import { expect } from "chai";
import { pino } from "pino";
import { WatchHub, type WatchSink } from "../../server/engine/locks/watch-hub.js";
import { MemoryStore } from "../../server/store/memory/memory-store.js";
import type { LockEvent, LockState } from "../../server/store/store.js";
import { RecordingListener } from "../harness/recording-listener.js";
import { until } from "../harness/until.js";

/** A sink that records what the hub sends it. */
class RecordingSink implements WatchSink {
  readonly sent: ({ snapshot: LockState; resync: boolean } | { event: LockEvent })[] = [];
  lagging = false;
  failed?: string;
  snapshot(snapshot: LockState, resync: boolean): void {
    this.sent.push({ snapshot, resync });
  }
  event(event: LockEvent): void {
    this.sent.push({ event });
  }
  fail(reason: string): void {
    this.failed = reason;
  }
}

/** The embedded store, counting describes. */
class CountingStore extends MemoryStore {
  describes = 0;
  override describe(name: string): Promise<LockState> {
    this.describes++;
    return super.describe(name);
  }
}

// The hub on the embedded store, fed changes directly where a test needs one that Redis would
// only produce by losing a message.
describe("WatchHub", () => {
  let store: CountingStore;
  let hub: WatchHub;
  const claim = (sessionId: string) => ({
    name: "a",
    sessionId,
    owner: "o",
    requestId: "r",
    ttlMs: 30_000,
    mode: "exclusive" as const,
    limit: 0,
    mayWait: true,
  });

  beforeEach(async () => {
    store = new CountingStore();
    hub = new WatchHub(store, pino({ level: "silent" }));
    const listener = new RecordingListener();
    listener.event = (e) => hub.event(e);
    await store.start(listener);
  });
  afterEach(async () => {
    hub.stop();
    await store.close();
  });

  it("sends a fresh snapshot (resync) to a watcher that sees a version gap, and nothing of the gapped change", async () => {
    const sink = new RecordingSink();
    hub.add("a", sink);
    await until(() => sink.sent.length === 1, "the first snapshot");
    await store.acquire(claim("s1"));
    const acquired = sink.sent[1] as { event: LockEvent };
    hub.event({ ...acquired.event, version: acquired.event.version + 2n });
    await until(() => sink.sent.length === 3, "the resync");
    expect(sink.sent[2]).to.have.property("resync", true);
    expect((sink.sent[2] as { snapshot: LockState }).snapshot.holders).to.have.length(1);
  });

  it("drops a change the snapshot already includes", async () => {
    await store.acquire(claim("s1"));
    const sink = new RecordingSink();
    hub.add("a", sink);
    await until(() => sink.sent.length === 1, "the snapshot");
    const { snapshot } = sink.sent[0] as { snapshot: LockState };
    hub.event({
      name: "a",
      version: snapshot.version,
      change: "acquired",
      holder: snapshot.holders[0],
      holdersLeft: 1,
    });
    await store.release({ name: "a", sessionId: "s1", owner: "o" }, false);
    expect(sink.sent.map((m) => ("event" in m ? m.event.version : "snapshot"))).to.deep.equal([
      "snapshot",
      snapshot.version + 1n,
    ]);
  });

  it("reads one snapshot for every watcher that joins in the same turn", async () => {
    const sinks = [new RecordingSink(), new RecordingSink(), new RecordingSink()];
    for (const sink of sinks) hub.add("a", sink);
    await until(() => sinks.every((s) => s.sent.length === 1), "the snapshots");
    expect(store.describes).to.equal(1);
  });

  it("holds a lagging watcher's changes back and resyncs it once it has caught up", async () => {
    const sink = new RecordingSink();
    const watcher = hub.add("a", sink);
    await until(() => sink.sent.length === 1, "the snapshot");
    sink.lagging = true;
    await store.acquire(claim("s1"));
    await store.release({ name: "a", sessionId: "s1", owner: "o" }, false);
    expect(sink.sent).to.have.length(2);
    sink.lagging = false;
    hub.caughtUp(watcher);
    await until(() => sink.sent.length === 3, "the resync");
    expect(sink.sent[2]).to.have.property("resync", true);
  });
});
