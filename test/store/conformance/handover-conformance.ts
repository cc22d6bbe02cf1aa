import { expect } from "chai";
import type { LockEvent } from "../../../server/store/store.js";
import { ask, askShared, holdOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";

/** Hand-over (docs/elections.md): transfer, release requests and queue priority, through the Store interface. */
export function handoverConformance(f: ConformanceFixture): void {
  const from = (sessionId: string, token: bigint, more = {}) => ({
    ...holdOf("a", sessionId),
    token,
    toSessionId: "",
    toOwner: "",
    ...more,
  });
  const queueOf = async (name = "a") =>
    (await f.store.describe(name)).waiters.map((w) => `${w.sessionId}:${w.priority}`);

  f.it("transfers an exclusive hold to the named waiter with a higher token; its grant is delivered", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { requestId: "r2" }));
    await f.store.acquire(ask("a", "s3", { requestId: "r3", owner: "p" }));
    const outcome = await f.store.transfer(from("s1", 1n, { toSessionId: "s3", toOwner: "p" }));
    expect(outcome).to.deep.equal({
      kind: "transferred",
      token: 2n,
      to: { sessionId: "s3", owner: "p", requestId: "r3" },
    });
    await f.listener.until(() => f.listener.grants.length === 1, "the successor's grant");
    expect(f.listener.grants).to.deep.equal([{ name: "a", sessionId: "s3", requestId: "r3", token: 2n }]);
    const state = await f.store.describe("a");
    expect(state.holders.map((h) => [h.sessionId, h.owner, h.token])).to.deep.equal([["s3", "p", 2n]]);
    expect(state.waiters.map((w) => w.sessionId)).to.deep.equal(["s2"]);
  });

  f.it("transfers to the head of the queue when no successor is named", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { requestId: "r2" }));
    await f.store.acquire(ask("a", "s3", { requestId: "r3" }));
    expect(await f.store.transfer(from("s1", 1n))).to.deep.include({ kind: "transferred", token: 2n });
    expect((await f.store.describe("a")).holders[0].sessionId).to.equal("s2");
  });

  f.it("shows watchers one change, old → new, never a moment without a holder", async () => {
    await f.store.watch("a");
    await f.store.acquire(ask("a", "s1", { value: Buffer.from("old") }));
    await f.store.acquire(ask("a", "s2", { requestId: "r2", value: Buffer.from("new") }));
    await f.store.transfer(from("s1", 1n));
    await f.listener.until(() => f.listener.events.length === 2, "two changes");
    const [, moved] = f.listener.events as LockEvent[];
    expect([moved.change, moved.holdersLeft, moved.holder.sessionId, moved.holder.token]).to.deep.equal([
      "transferred",
      1,
      "s2",
      2n,
    ]);
    expect(Buffer.from(moved.holder.value).toString()).to.equal("new");
    expect(
      moved.from && [moved.from.sessionId, moved.from.token, Buffer.from(moved.from.value).toString()],
    ).to.deep.equal(["s1", 1n, "old"]);
    expect(moved.version - f.listener.events[0].version).to.equal(1n);
  });

  f.it("applies no lock-delay: after the successor releases, the lock is free at once", async () => {
    await f.store.acquire(ask("a", "s1", { lockDelayMs: 30_000 }));
    await f.store.acquire(ask("a", "s2", { requestId: "r2" }));
    await f.store.transfer(from("s1", 1n));
    await f.store.release(holdOf("a", "s2"), false);
    expect(await f.store.acquire(ask("a", "s3"))).to.deep.include({ kind: "granted" });
  });

  f.it("answers a re-run transfer (a lost reply) with the same transfer, and refuses another token", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { requestId: "r2" }));
    const first = await f.store.transfer(from("s1", 1n));
    expect(await f.store.transfer(from("s1", 1n))).to.deep.equal(first);
    expect(await f.store.transfer(from("s1", 9n))).to.deep.equal({ kind: "not-held" });
  });

  f.it("refuses a successor that does not wait, naming who does; nothing changes", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { requestId: "r2" }));
    expect(await f.store.transfer(from("s1", 1n, { toSessionId: "s9" }))).to.deep.equal({
      kind: "not-waiting",
      waiting: [{ sessionId: "s2", owner: "o", requestId: "r2" }],
    });
    expect((await f.store.describe("a")).holders[0].sessionId).to.equal("s1");
  });

  f.it("refuses a transfer with nobody waiting, of a shared hold, and of a lock not held", async () => {
    await f.store.acquire(ask("a", "s1"));
    expect(await f.store.transfer(from("s1", 1n))).to.deep.equal({ kind: "not-waiting", waiting: [] });
    await f.store.acquire(askShared("b", "s1", 0));
    expect(await f.store.transfer({ ...from("s1", 1n), name: "b" })).to.deep.equal({ kind: "shared" });
    expect(await f.store.transfer({ ...from("s2", 1n), name: "c" })).to.deep.equal({ kind: "not-held" });
  });

  f.itWithTwoStores("delivers a transfer's grant to the coordinator the successor waits on", async () => {
    const other = await f.open();
    await f.store.acquire(ask("a", "s1"));
    await other.store.acquire(ask("a", "s2", { requestId: "r2" }));
    await f.store.transfer(from("s1", 1n));
    await other.listener.until(() => other.listener.grants.length === 1, "the grant on the other store");
    expect(other.listener.grants).to.deep.equal([{ name: "a", sessionId: "s2", requestId: "r2", token: 2n }]);
    expect(f.listener.grants).to.deep.equal([]);
  });

  f.it("records a release request on every holder, tells the listener, and shows it in describe", async () => {
    expect(await f.store.requestRelease({ name: "a", requester: "operator", reason: "deploy" })).to.equal(0);
    await f.store.acquire(askShared("a", "s1", 0));
    await f.store.acquire(askShared("a", "s2", 0));
    expect(await f.store.requestRelease({ name: "a", requester: "session s9", reason: "new version" })).to.equal(2);
    await f.listener.until(() => f.listener.releaseRequests.length === 2, "two release requests");
    const asked = f.listener.releaseRequests.map((r) => `${r.sessionId}:${r.owner} ${r.requester} ${r.reason}`);
    expect(asked.sort()).to.deep.equal(["s1:o session s9 new version", "s2:o session s9 new version"]);
    const state = await f.store.describe("a");
    expect(state.holders.map((h) => h.releaseRequest)).to.deep.equal([
      { requester: "session s9", reason: "new version" },
      { requester: "session s9", reason: "new version" },
    ]);
    await f.store.release(holdOf("a", "s1"), false);
    await f.store.acquire(askShared("a", "s1", 0, { requestId: "r2" }));
    expect((await f.store.describe("a")).holders.map((h) => h.releaseRequest)).to.deep.equal([
      { requester: "session s9", reason: "new version" },
      undefined,
    ]);
  });

  f.itWithTwoStores("broadcasts a release request to every coordinator", async () => {
    const other = await f.open();
    await other.store.acquire(ask("a", "s1"));
    await f.store.requestRelease({ name: "a", requester: "operator", reason: "" });
    await other.listener.until(() => other.listener.releaseRequests.length === 1, "the request on the other store");
    expect(other.listener.releaseRequests[0]).to.deep.equal({
      name: "a",
      sessionId: "s1",
      owner: "o",
      requester: "operator",
      reason: "",
    });
  });

  f.it("queues by priority, FIFO within one, and hands on in that order", async () => {
    await f.store.acquire(ask("a", "s0"));
    expect(await f.store.acquire(ask("a", "s1"))).to.deep.include({ position: 1 });
    expect(await f.store.acquire(ask("a", "s2", { priority: 5 }))).to.deep.include({ position: 1 });
    expect(await f.store.acquire(ask("a", "s3", { priority: 5 }))).to.deep.include({ position: 2 });
    expect(await f.store.acquire(ask("a", "s4", { priority: 9 }))).to.deep.include({ position: 1 });
    expect(await queueOf()).to.deep.equal(["s4:9", "s2:5", "s3:5", "s1:0"]);
    await f.store.release(holdOf("a", "s0"), false);
    await f.listener.until(() => f.listener.grants.length === 1, "a grant");
    expect(f.listener.grants[0].sessionId).to.equal("s4");
  });

  f.it("never pre-empts a holder for a higher priority; shared waiters keep the rule", async () => {
    await f.store.acquire(askShared("a", "s0", 1));
    expect(await f.store.acquire(askShared("a", "s1", 1, { priority: 100 }))).to.deep.include({ kind: "queued" });
    await f.store.acquire(askShared("a", "s2", 1, { priority: 50 }));
    expect(await queueOf()).to.deep.equal(["s1:100", "s2:50"]);
  });
}
