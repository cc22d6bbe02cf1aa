import { expect } from "chai";
import { Cluster } from "ioredis";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import type { AcquireArgs } from "../../server/store/store.js";
import { RecordingListener } from "../harness/recording-listener.js";
import { startRedisCluster, type TestRedisCluster } from "../harness/redis-cluster.js";
import { errorCount, type MigrationNode, nodeId, startSlotMigration } from "../harness/slot-migration.js";
import { until } from "../harness/until.js";

function claim(name: string, sessionId: string, requestId: string): AcquireArgs {
  return { name, sessionId, owner: "o", requestId, ttlMs: 30_000, mode: "exclusive", limit: 0, mayWait: true };
}

// Both ways a Cluster store writes: straight to the slot's master (replica acks on, the default on
// Cluster: the floors need the master's epoch; these masters have no replica, so no WAIT), and through
// the Cluster client's own routing (acks off).
for (const replicaAcks of ["majority", 0] as const) {
  describe(`RedisStore on Redis Cluster while a lock's slot migrates (replica acks ${replicaAcks || "off"})`, function () {
    this.timeout(60_000);
    let cluster: TestRedisCluster;
    let admin: Cluster;
    let store: RedisStore;
    let listener: RecordingListener;
    let serial = 0;

    before(async () => {
      cluster = await startRedisCluster(3);
      admin = new Cluster(cluster.nodes);
    });
    beforeEach(async () => {
      listener = new RecordingListener();
      store = new RedisStore({ target: { kind: "cluster", nodes: cluster.nodes }, replicaAcks });
      await store.start(listener);
    });
    afterEach(() => store.close());
    after(async () => {
      admin?.disconnect();
      await cluster?.stop();
    });

    /** A fresh name, its slot, the node serving it and another master to move it to. */
    async function placed(): Promise<{
      name: string;
      slot: number;
      from: MigrationNode;
      to: MigrationNode;
      others: number[];
    }> {
      const name = `reshard/${replicaAcks}/${serial++}`;
      const slot = Number(await admin.cluster("KEYSLOT", lockKeys("turnstile", name)[0]));
      const range = (await admin.cluster("SLOTS")).find(([a, b]) => a <= slot && slot <= b);
      if (!range) throw new Error(`no master serves slot ${slot}`);
      const fromPort = range[2][1];
      const ports = cluster.nodes.map((n) => n.port).filter((p) => p !== fromPort);
      const [toPort, ...others] = ports;
      return {
        name,
        slot,
        from: { port: fromPort, id: await nodeId(fromPort) },
        to: { port: toPort, id: await nodeId(toPort) },
        others,
      };
    }

    /** `name` held by session s1 with s2 queued behind it: every one of its six keys exists. */
    async function heldWithWaiter(name: string): Promise<bigint> {
      const held = await store.acquire(claim(name, "s1", "r1"));
      expect(held.kind).to.equal("granted");
      expect(await store.acquire(claim(name, "s2", "r2"))).to.deep.include({ kind: "queued" });
      return (held as { token: bigint }).token;
    }

    it("retries a script whose lock's keys are split between the two nodes (TRYAGAIN) until the slot has moved", async () => {
      const { name, slot, from, to, others } = await placed();
      const token = await heldWithWaiter(name);
      const migration = await startSlotMigration(slot, from, to);
      try {
        const keys = await migration.keysLeft();
        expect(keys).to.have.length(6);
        await migration.move(keys.slice(0, 3)); // half of the lock on each node
        const before = await errorCount(from.port, "TRYAGAIN");
        let settled = false;
        const release = store.release({ name, sessionId: "s1", owner: "o" }, false).finally(() => (settled = true));
        // Refused and retried while split: the source says TRYAGAIN again and again.
        await until(async () => (await errorCount(from.port, "TRYAGAIN")) >= before + 2, "TRYAGAIN retries", 5000, 5);
        expect(settled, "the release waits while the lock is split").to.equal(false);
        await migration.finish(others);
        expect(await release).to.deep.equal({ kind: "released", holdCount: 0 });
        // The hand-on ran on the new master, with the next token from the counter that moved along.
        await until(() => listener.grants.length > 0, "the waiter's grant", 5000);
        expect(listener.grants[0]).to.deep.include({ name, sessionId: "s2", token: token + 1n });
      } finally {
        migration.close();
      }
    });

    it("follows ASK to the importing node once all of a lock's keys are there, and MOVED once the slot is", async () => {
      const { name, slot, from, to, others } = await placed();
      const token = await heldWithWaiter(name);
      const migration = await startSlotMigration(slot, from, to);
      try {
        await migration.move(); // all six keys on the target; the slot still the source's
        const asks = await errorCount(from.port, "ASK");
        expect(await store.release({ name, sessionId: "s1", owner: "o" }, false)).to.deep.equal({
          kind: "released",
          holdCount: 0,
        });
        expect(await errorCount(from.port, "ASK"), "the source redirected the release").to.be.above(asks);
        await until(() => listener.grants.length > 0, "the waiter's grant", 5000);
        expect(listener.grants[0]).to.deep.include({ name, sessionId: "s2", token: token + 1n });
        // The keys stayed together on the target: nothing was written on the source meanwhile.
        expect(await migration.keysLeft()).to.deep.equal([]);
        await migration.finish(others);
        // Every coordinator's slot map is stale now: the source answers MOVED, and the write follows it.
        const moved = await errorCount(from.port, "MOVED");
        expect(await store.release({ name, sessionId: "s2", owner: "o" }, false)).to.deep.include({ kind: "released" });
        const next = await store.acquire(claim(name, "s3", "r3"));
        expect(next).to.deep.include({ kind: "granted", token: token + 2n });
        if (replicaAcks) expect(await errorCount(from.port, "MOVED"), "the source redirected").to.be.above(moved);
        const state = await store.describe(name);
        expect(state.holders.map((h) => [h.sessionId, h.token])).to.deep.equal([["s3", token + 2n]]);
      } finally {
        migration.close();
      }
    });
  });
}
