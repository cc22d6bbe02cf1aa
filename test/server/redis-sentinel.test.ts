import { expect } from "chai";
import { Redis } from "ioredis";
import { TurnstileClient } from "../../client/index.js";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { HealthClient } from "../harness/health-client.js";
import { spawnServe, startTargetCoordinator } from "../harness/redis-coordinator.js";
import { startRedisSentinel, type TestSentinel } from "../harness/redis-sentinel.js";
import type { TurnstileProcess } from "../harness/run-turnstile.js";
import { until } from "../harness/until.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

describe("coordinators on Redis with Sentinel (master, replica, one Sentinel)", () => {
  let sentinel: TestSentinel;
  let inProcess: { address: string; stop(): Promise<void> };
  let serve: TurnstileProcess;
  let viaCli: string;
  const clients: TurnstileClient[] = [];
  const client = (address: string, ttlMs = 60_000) => {
    const c = new TurnstileClient(address, { ttlMs });
    clients.push(c);
    return c;
  };

  before(async () => {
    sentinel = await startRedisSentinel();
    inProcess = await startTargetCoordinator({
      kind: "sentinel",
      sentinels: sentinel.sentinels,
      masterName: sentinel.masterName,
    });
    const sentinels = sentinel.sentinels.map((s) => `${s.host}:${s.port}`).join(",");
    ({ address: viaCli, serve } = await spawnServe([
      "--redis-sentinel",
      sentinels,
      "--redis-master",
      sentinel.masterName,
    ]));
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    serve.child.kill("SIGKILL");
    await inProcess.stop();
    await sentinel.stop();
  });

  it("acquires, hands off by push and fences through the master the Sentinel names", async () => {
    const holder = await client(inProcess.address).acquire("sentinel/handoff");
    const waiting = client(viaCli).acquire("sentinel/handoff");
    await waitForQueue(sentinel.master.url, "sentinel/handoff", 1);
    await holder.release();
    expect((await waiting).fencingToken).to.equal(holder.fencingToken + 1n);
  });

  it("keeps held locks and queued waiters across a Sentinel failover, and issues tokens above the new epoch", async () => {
    // The lease must outlast the failover plus the wait for the new master's epoch (renewals answer
    // UNAVAILABLE until it is known; up to 15 s under load, as the health wait below allows).
    const ttlMs = 30_000;
    const holder = await client(inProcess.address, ttlMs).acquire("sentinel/failover");
    const waiting = client(viaCli, ttlMs).acquire("sentinel/failover");
    await waitForQueue(sentinel.master.url, "sentinel/failover", 1);
    await sentinel.failover();
    const newMaster = new Redis(sentinel.replica.url);
    const [holders, , queue, leases, fence] = lockKeys("turnstile", "sentinel/failover");
    try {
      expect(((await newMaster.call("ROLE")) as unknown[])[0]).to.equal("master");
      expect([await newMaster.zcard(holders), await newMaster.zcard(queue)]).to.deep.equal([1, 1]);
      // Both sessions go on renewing, now on the new master: their lease deadlines move on there.
      // [member, score], flat (RESP2) or nested (RESP3).
      const deadline = async (key: string) =>
        Number(((await newMaster.call("ZRANGE", key, 0, 0, "WITHSCORES")) as unknown[]).flat()[1]);
      const deadlines = async () => [await deadline(holders), await deadline(leases)];
      const [holderAt, waiterAt] = await deadlines();
      await until(
        async () => {
          const [holderNow, waiterNow] = await deadlines();
          return holderNow > holderAt && waiterNow > waiterAt;
        },
        "both lease deadlines to move on on the new master",
        ttlMs,
        50,
      );
      expect(holder.lost).to.equal(false);
      // Writes wait for the new master's epoch (UNAVAILABLE until then): health says when it is known.
      for (const address of [inProcess.address, viaCli]) {
        const health = new HealthClient(address);
        try {
          await health.watch()("SERVING", 15_000);
        } finally {
          health.close();
        }
      }
      await holder.release();
      const next = await waiting;
      // The new master's epoch (1) sits above the counter: every token after the failover is above every one before.
      expect(next.fencingToken).to.equal((1n << 32n) + 1n);
      expect(holder.fencingToken >> 32n).to.equal(0n);
      await next.release();
      const after = await client(inProcess.address).acquire("sentinel/failover");
      expect(after.fencingToken).to.equal(next.fencingToken + 1n);
      expect(await newMaster.get(fence)).to.equal(String(after.fencingToken));
      await after.release();
    } finally {
      newMaster.disconnect();
    }
  });
});
