import { expect } from "chai";
import { until } from "../../harness/until.js";
import { ask, holdOf, LONG_TTL, SHORT_TTL } from "./claims.js";
import type { ConformanceFixture } from "./conformance-fixture.js";
import { passTime } from "./wait-for.js";

/** Fencing tokens: strictly increasing per name across releases, hand-offs and expiry. */
export function fencingConformance(f: ConformanceFixture): void {
  f.it("keeps tokens strictly increasing across releases, hand-offs and ended leases", async () => {
    const tokens: bigint[] = [];
    const grant = async (sessionId: string, ttlMs = LONG_TTL) => {
      const outcome = await f.store.acquire(ask("a", sessionId, { ttlMs, mayWait: false }));
      if (outcome.kind !== "granted") throw new Error(`${sessionId}: ${outcome.kind}`);
      tokens.push(outcome.token);
    };
    await grant("s1");
    await f.store.acquire(ask("a", "w1"));
    await f.store.release(holdOf("a", "s1"), false);
    tokens.push(f.listener.grants[0].token);
    await f.store.release(holdOf("a", "w1"), false);
    await grant("s2", SHORT_TTL);
    await until(async () => (await f.store.check("a", [])).recheckInMs === -1, "s2's lease to end");
    await grant("s3");
    expect(tokens).to.deep.equal([1n, 2n, 3n, 4n]);
  });

  f.it("counts tokens per lock name", async () => {
    await f.store.acquire(ask("a", "s1"));
    await f.store.acquire(ask("a", "s2", { owner: "o2", mayWait: false }));
    expect(await f.store.acquire(ask("b", "s1"))).to.deep.equal({
      kind: "granted",
      token: 1n,
      holdCount: 1,
    });
  });

  f.it("keeps the fencing counter of a lock held for longer than fenceRetainMs", async () => {
    const { store } = await f.open({ fenceRetainMs: SHORT_TTL });
    expect(await store.acquire(ask("a", "s1"))).to.deep.include({ token: 1n });
    await passTime(store, SHORT_TTL * 2);
    await store.release(holdOf("a", "s1"), false);
    expect(await store.acquire(ask("a", "s2"))).to.deep.include({ kind: "granted", token: 2n });
  });

  f.itWithTwoStores("keeps one token sequence per name across two stores", async () => {
    const other = await f.open();
    await f.store.acquire(ask("a", "s1"));
    await f.store.release(holdOf("a", "s1"), false);
    expect(await other.store.acquire(ask("a", "s2"))).to.deep.include({
      kind: "granted",
      token: 2n,
    });
  });
}
