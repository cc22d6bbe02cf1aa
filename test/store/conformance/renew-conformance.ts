import { expect } from "chai";
import { ask, holdOf, SHORT_TTL, waiterOf } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";
import { passTime } from "./wait-for.js";

/** Renew: live holds and queue entries are extended; ended ones are never revived. */
export function renewConformance(f: ConformanceFixture): void {
  f.it("renews a live hold: its lease then ends a full TTL from now", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: 1_000 }));
    expect(await f.store.renew("a", "s1", 20_000, ["o"], [])).to.deep.equal({
      holds: [{ token: 1n, count: 1 }],
      waiters: [],
    });
    expect((await f.store.check("a", [])).recheckInMs).to.be.within(10_000, 20_000);
  });

  f.it("renews a live queue entry, which then stays queued past its first deadline", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { ttlMs: SHORT_TTL }));
    expect(await f.store.renew("a", "s2", 20_000, [], [waiterOf("a", "s2")])).to.deep.equal({
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
    expect(await f.store.renew("a", "s2", 20_000, [], [waiterOf("a", "s2")])).to.deep.equal({
      holds: [],
      waiters: ["granted"],
    });
    expect((await f.store.check("a", [])).recheckInMs).to.be.within(10_000, 20_000);
  });

  f.it("answers not alive for an owner that holds nothing and gone for a request not queued", async () => {
    await f.store.acquire(ask("a", "s1"));
    expect(
      await f.store.renew("a", "s1", 20_000, ["o", "nobody"], [waiterOf("a", "s1", "nothing", "nobody")]),
    ).to.deep.equal({
      holds: [{ token: 1n, count: 1 }, null],
      waiters: ["gone"],
    });
    expect(await f.store.renew("a", "s2", 20_000, ["o"], [waiterOf("a", "s2")])).to.deep.equal({
      holds: [null],
      waiters: ["gone"],
    });
    expect(await f.store.renew("nothing-here", "s1", 20_000, ["o"], [waiterOf("nothing-here", "s1")])).to.deep.equal({
      holds: [null],
      waiters: ["gone"],
    });
  });

  f.it("does not revive a hold whose lease ended; the next claim gets a greater token", async () => {
    await f.store.acquire(ask("a", "s1", { ttlMs: SHORT_TTL }));
    await passTime(f.store, SHORT_TTL);
    expect(await f.store.renew("a", "s1", 20_000, ["o"], [waiterOf("a", "s1")])).to.deep.equal({
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
    expect(await f.store.renew("a", "s2", 20_000, [], [waiterOf("a", "s2")])).to.deep.equal({
      holds: [],
      waiters: ["gone"],
    });
    expect(await f.store.acquire(ask("a", "s3"))).to.include({ kind: "queued", position: 1 });
  });
}
