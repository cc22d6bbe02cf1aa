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

  const claim = (name: string, sessionId: string, requestId: string) => ({ name, sessionId, owner: "o", requestId });
  const acquire = (name: string, sessionId: string, requestId: string) =>
    store.acquire({
      ...claim(name, sessionId, requestId),
      ttlMs: LONG_TTL_MS,
      mode: "exclusive",
      limit: 0,
      mayWait: true,
    });
  const tokenOf = (outcome: Awaited<ReturnType<typeof acquire>>) => {
    if (outcome.kind !== "granted") throw new Error(`not granted: ${outcome.kind}`);
    return outcome.token;
  };

  it("drops a hold and a waiter whose release and cancel the new master lost, and grants the next waiter; a later grant stays", async () => {
    // "k": released and granted again before the failover, so the journaled token is not the live hold's.
    const k1 = tokenOf(await acquire("k", "s3", "k1"));
    await store.release({ name: "k", sessionId: "s3", owner: "o", token: k1 }, false);
    const k2 = tokenOf(await acquire("k", "s3", "k2"));

    // "j": s1 holds, s2 and s4 wait; s4 cancels, s1 releases (s2 is granted); then both are lost.
    const held = tokenOf(await acquire("j", "s1", "r1"));
    expect((await acquire("j", "s2", "r2")).kind).to.equal("queued");
    expect((await acquire("j", "s4", "r4")).kind).to.equal("queued");
    const keys = lockKeys("turnstile", "j").slice(0, 4);
    const before = await Promise.all(keys.map((k) => admin.dumpBuffer(k)));
    expect(await store.withdraw(claim("j", "s4", "r4"), "cancel")).to.deep.equal({ kind: "withdrawn" });
    const released = await store.release({ name: "j", sessionId: "s1", owner: "o", token: held }, false);
    expect(released).to.deep.equal({ kind: "released", holdCount: 0 });
    expect(grants.map((g) => g.requestId)).to.deep.equal(["r2"]);
    // Lost: the keys as they were before the cancel and the release, on the master and (WAIT) its replica.
    const tx = admin.multi();
    tx.del(...keys);
    for (const [i, k] of keys.entries()) if (before[i]) tx.restore(k, 0, before[i]);
    await tx.exec();
    expect(await admin.wait(1, 5000)).to.equal(1);

    const { promotedAt } = await group.failover();
    await until(() => grants.length === 2, "the waiter to be granted again on the new master", 30_000);
    // Long before s1's lease (2 min) could have ended it.
    const grantedMs = Number((process.hrtime.bigint() - promotedAt) / 1_000_000n);
    expect(grantedMs, "ms from the new master being named to the grant").to.be.below(LONG_TTL_MS / 4);
    expect(grants[1].requestId).to.equal("r2");
    const epochOf = (token: bigint) => Number(token >> EPOCH_SHIFT);
    expect(epochOf(grants[1].token), "a token of the new master's epoch").to.be.above(epochOf(held));
    // One release-token.lua per lock ("j", "k") and one release.lua for the cancel; drops and
    // withdrawals are counted once acknowledged (the old master may still be resyncing).
    expect(reports).to.have.length(1);
    expect(reports[0]).to.include({ entries: 3, scripts: 3, failed: 0 });
    expect(reports[0].dropped + reports[0].withdrawn + reports[0].unacknowledged).to.be.at.least(1);

    const state = await store.describe("j");
    expect(state.holders.map((h) => h.sessionId)).to.deep.equal(["s2"]);
    expect(state.waiters).to.deep.equal([]);
    const other = await store.describe("k");
    expect(other.holders.map((h) => [h.sessionId, h.token])).to.deep.equal([["s3", k2]]);
  });
});
