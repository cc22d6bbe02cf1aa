import { expect } from "chai";
import { RENEW_LOCKS_PER_SCRIPT } from "../../../server/store/redis/scripts/renew.js";
import { ask, holdOf, renewOne, SHORT_TTL, waiterOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";
import { passTime } from "./wait-for.js";

/** Renew: live holds and queue entries are extended; ended ones are never revived. */
export function renewConformance(f: ConformanceFixture): void {
  f.it("renews a live hold: its lease then ends a full TTL from now", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: 1_000 }));
    expect(await renewOne(f.store, "a", "s1", 20_000, ["o"], [])).to.deep.equal({
      holds: [{ token: 1n, count: 1 }],
      waiters: [],
    });
    expect((await f.store.check("a", [])).recheckInMs).to.be.within(10_000, 20_000);
  });

  f.it("renews a live queue entry, which then stays queued past its first deadline", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { ttlMs: SHORT_TTL }));
    expect(await renewOne(f.store, "a", "s2", 20_000, [], [waiterOf("a", "s2")])).to.deep.equal({
      holds: [],
      waiters: ["queued"],
    });
    await passTime(f.store, SHORT_TTL);
    expect((await f.store.check("a", [waiterOf("a", "s2")])).statuses).to.deep.equal([{ kind: "queued" }]);
  });

  f.it("renews in its place the hold of a waiter granted meanwhile", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { ttlMs: 1_000 }));
    await f.store.release(holdOf("a", "s1"), false);
    expect(await renewOne(f.store, "a", "s2", 20_000, [], [waiterOf("a", "s2")])).to.deep.equal({
      holds: [],
      waiters: ["granted"],
    });
    expect((await f.store.check("a", [])).recheckInMs).to.be.within(10_000, 20_000);
  });

  f.it("answers not alive for an owner that holds nothing and gone for a request not queued", async () => {
    await f.store.acquire(ask("a", "s1"));
    expect(
      await renewOne(f.store, "a", "s1", 20_000, ["o", "nobody"], [waiterOf("a", "s1", "nothing", "nobody")]),
    ).to.deep.equal({
      holds: [{ token: 1n, count: 1 }, null],
      waiters: ["gone"],
    });
    expect(await renewOne(f.store, "a", "s2", 20_000, ["o"], [waiterOf("a", "s2")])).to.deep.equal({
      holds: [null],
      waiters: ["gone"],
    });
    expect(
      await renewOne(f.store, "nothing-here", "s1", 20_000, ["o"], [waiterOf("nothing-here", "s1")]),
    ).to.deep.equal({
      holds: [null],
      waiters: ["gone"],
    });
  });

  f.it("does not revive a hold whose lease ended; the next claim gets a greater token", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: SHORT_TTL }));
    await passTime(f.store, SHORT_TTL);
    expect(await renewOne(f.store, "a", "s1", 20_000, ["o"], [waiterOf("a", "s1")])).to.deep.equal({
      holds: [null],
      waiters: ["gone"],
    });
    expect(await f.store.acquire(ask("a", "s2", { mayWait: false }))).to.deep.equal({
      kind: "granted",
      token: 2n,
      holdCount: 1,
    });
    expect(await f.store.release(holdOf("a", "s1"), false)).to.deep.equal({ kind: "not-held" });
  });

  f.it("does not revive a queue entry whose lease ended", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { ttlMs: SHORT_TTL }));
    await passTime(f.store, SHORT_TTL);
    expect(await renewOne(f.store, "a", "s2", 20_000, [], [waiterOf("a", "s2")])).to.deep.equal({
      holds: [],
      waiters: ["gone"],
    });
    expect(await f.store.acquire(ask("a", "s3"))).to.include({ kind: "queued", position: 1 });
  });

  f.it("renews every lock of a session in one call, answering each lock as a renewal of it alone would", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: 1_000 }));
    await f.store.acquire(ask("b", "s0"));
    await f.store.acquire(ask("b", "s1", { ttlMs: 1_000 }));
    await f.store.acquire(ask("d", "s0"));
    await f.store.acquire(ask("d", "s1", { ttlMs: 1_000 }));
    await f.store.release(holdOf("d", "s0"), false);
    const locks = [
      { name: "a", owners: ["o", "nobody"], waiters: [] },
      { name: "b", owners: [], waiters: [waiterOf("b", "s1")] },
      { name: "c", owners: ["o"], waiters: [waiterOf("c", "s1")] },
      { name: "d", owners: [], waiters: [waiterOf("d", "s1")] },
    ];
    expect((await f.store.renew({ sessionId: "s1", ttlMs: 20_000, locks })).locks).to.deep.equal([
      { holds: [{ token: 1n, count: 1 }, null], waiters: [] },
      { holds: [], waiters: ["queued"] },
      { holds: [null], waiters: ["gone"] },
      { holds: [], waiters: ["granted"] },
    ]);
    for (const name of ["a", "d"])
      expect((await f.store.check(name, [])).recheckInMs, name).to.be.within(10_000, 20_000);
    expect((await f.store.describe("b")).waiters[0].leaseMs).to.be.above(10_000);
  });

  f.it("renews the live locks of a call whose other locks' holds ended, and revives none of those", async () => {
    await f.store.acquire(ask("gone", "s1", { ttlMs: SHORT_TTL }));
    await f.store.acquire(ask("live", "s1", { ttlMs: 1_000 }));
    await passTime(f.store, SHORT_TTL);
    const locks = ["gone", "live"].map((name) => ({ name, owners: ["o"], waiters: [] }));
    expect(await f.store.renew({ sessionId: "s1", ttlMs: 20_000, locks })).to.deep.equal({
      locks: [
        { holds: [null], waiters: [] },
        { holds: [{ token: 1n, count: 1 }], waiters: [] },
      ],
    });
    expect((await f.store.check("live", [])).recheckInMs).to.be.within(10_000, 20_000);
    expect(await f.store.acquire(ask("gone", "s2", { mayWait: false }))).to.include({ kind: "granted", token: 2n });
  });

  f.it("renews more locks than one script takes (RENEW_LOCKS_PER_SCRIPT), each answered in order", async () => {
    const names = Array.from({ length: RENEW_LOCKS_PER_SCRIPT + 20 }, (_, i) => `many/${i}`);
    await Promise.all(names.map((name) => f.store.acquire(ask(name, "s1", { ttlMs: 1_000 }))));
    const locks = names.map((name, i) => ({ name, owners: [i % 2 ? "o" : "nobody"], waiters: [] }));
    const outcomes = (await f.store.renew({ sessionId: "s1", ttlMs: 20_000, locks })).locks;
    expect(outcomes.map((o) => o.holds[0]?.token ?? null)).to.deep.equal(names.map((_, i) => (i % 2 ? 1n : null)));
    expect((await f.store.check(names[names.length - 1], [])).recheckInMs).to.be.within(10_000, 20_000);
  });
}
