import { expect } from "chai";
import { Redis } from "ioredis";
import type { JournalReplayReport } from "../../../server/store/redis/journal/journal-replay.js";
import { lockKeys } from "../../../server/store/redis/records/lock-keys.js";
import { RedisStore } from "../../../server/store/redis/redis-store.js";
import type { Grant, StoreListener } from "../../../server/store/store.js";
import { type SentinelGroup, startSentinelGroup } from "../../harness/sentinel-group.js";
import { until } from "../../harness/until.js";

const LONG_TTL_MS = 120_000;
const EPOCH_SHIFT = 32n;

/**
 * The switch window, made certain: a release is acknowledged, then undone on the master (its lock's
 * keys restored as they were before it) and replicated, so the replica the Sentinels promote next
 * holds the lock as if that release had been lost. The store must replay it there at once, not leave
 * the waiter queued until the holder's lease (two minutes) ends.
 */
describe("the release journal, replayed on a new Sentinel master", function () {
  this.timeout(120_000);
  let group: SentinelGroup;
  let store: RedisStore;
  let admin: Redis;
  const grants: Grant[] = [];
  const reports: JournalReplayReport[] = [];

  before(async () => {
    group = await startSentinelGroup(1, 2, { downAfterMs: 60_000, failoverTimeoutMs: 10_000 });
    store = new RedisStore({
      target: { kind: "sentinel", sentinels: group.sentinels, masterName: group.masterName },
      replicaAcks: 1,
      onJournalReplay: (r) => reports.push(r),
    });
    const listener: StoreListener = { grant: (g) => grants.push(g), revoked() {}, resync() {}, event() {} };
    await store.start(listener);
    await until(() => store.healthy(), "the store to be healthy");
    admin = new Redis({ port: await group.masterPort(), host: "127.0.0.1" });
  });
  after(async () => {
    admin?.disconnect();
    await store?.close();
    await group?.stop();
  });

  const claim = (sessionId: string, owner: string, requestId: string) => ({ name: "j", sessionId, owner, requestId });
  const acquire = (sessionId: string, owner: string, requestId: string) =>
    store.acquire({
      ...claim(sessionId, owner, requestId),
      ttlMs: LONG_TTL_MS,
      mode: "exclusive",
      limit: 0,
      mayWait: true,
    });

  it("drops a hold whose release the new master lost and grants the waiter; a hold granted after a release stays", async () => {
    // "k": released and re-acquired before the failover, so the journal's token is not the live hold's.
    const k1 = await store.acquire({
      ...claim("s3", "o", "k1"),
      name: "k",
      ttlMs: LONG_TTL_MS,
      mode: "exclusive",
      limit: 0,
      mayWait: true,
    });
    if (k1.kind !== "granted") throw new Error(`k1: ${k1.kind}`);
    await store.release({ name: "k", sessionId: "s3", owner: "o", token: k1.token }, false);
    const k2 = await store.acquire({
      ...claim("s3", "o", "k2"),
      name: "k",
      ttlMs: LONG_TTL_MS,
      mode: "exclusive",
      limit: 0,
      mayWait: true,
    });
    expect(k2.kind).to.equal("granted");

    const held = await acquire("s1", "o", "r1");
    if (held.kind !== "granted") throw new Error(`s1: ${held.kind}`);
    expect((await acquire("s2", "o", "r2")).kind).to.equal("queued");
    const keys = lockKeys("turnstile", "j").slice(0, 4);
    const before = await Promise.all(keys.map((k) => admin.dumpBuffer(k)));
    expect(await store.release({ name: "j", sessionId: "s1", owner: "o", token: held.token }, false)).to.deep.equal({
      kind: "released",
      holdCount: 0,
    });
    expect(grants.map((g) => g.requestId)).to.deep.equal(["r2"]);
    // Lost: the keys as they were before the release, on the master and (WAIT) its replica.
    const tx = admin.multi();
    tx.del(...keys);
    for (const [i, k] of keys.entries()) if (before[i]) tx.restore(k, 0, before[i]);
    await tx.exec();
    expect(await admin.wait(1, 5000)).to.equal(1);

    const { promotedAt } = await group.failover();
    await until(() => grants.length === 2, "the waiter to be granted again on the new master", 30_000);
    const grantedMs = Number((process.hrtime.bigint() - promotedAt) / 1_000_000n);
    expect(grantedMs, "ms from the new master being named to the grant").to.be.below(LONG_TTL_MS / 4);
    expect(grants[1].requestId).to.equal("r2");
    const epochOf = (token: bigint) => Number(token >> EPOCH_SHIFT);
    expect(epochOf(grants[1].token), "a token of the new master's epoch").to.be.above(epochOf(held.token));
    expect(reports).to.have.length(1);
    // One script per lock ("j", "k"); the drop counts only if its WAIT succeeded (the old master may still be resyncing).
    expect(reports[0]).to.include({ entries: 2, scripts: 2, failed: 0 });
    expect(reports[0].dropped + reports[0].unacknowledged).to.be.at.least(1);

    const state = await store.describe("j");
    expect(state.holders.map((h) => `${h.sessionId}:${h.owner}`)).to.deep.equal(["s2:o"]);
    const other = await store.describe("k");
    expect(other.holders.map((h) => [h.sessionId, h.token])).to.deep.equal([["s3", (k2 as { token: bigint }).token]]);
  });
});
