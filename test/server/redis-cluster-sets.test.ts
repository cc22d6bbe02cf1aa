import { expect } from "chai";
import { Cluster } from "ioredis";
import { TurnstileClient, type TurnstileError } from "../../client/index.js";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { startRedisCluster, type TestRedisCluster } from "../harness/redis-cluster.js";
import { startTargetCoordinator } from "../harness/redis-coordinator.js";
import { until } from "../harness/until.js";
import { sameSlotNames, slotOf } from "../store/conformance/set-names.js";

// AcquireAll on Redis Cluster: one script runs on one slot, so a set's names must share a slot.
describe("acquireAll on a Redis Cluster (3 masters)", () => {
  let cluster: TestRedisCluster;
  let one: { address: string; stop(): Promise<void> };
  let two: { address: string; stop(): Promise<void> };
  let admin: Cluster;
  const clients: TurnstileClient[] = [];
  const client = (address: string) => {
    const c = new TurnstileClient(address, { ttlMs: 60_000 });
    clients.push(c);
    return c;
  };
  /** The slot Redis itself computes for lock `name`'s keys. */
  const redisSlot = async (name: string) => (await admin.cluster("KEYSLOT", lockKeys("turnstile", name)[0])) as number;

  before(async () => {
    cluster = await startRedisCluster(3);
    one = await startTargetCoordinator({ kind: "cluster", nodes: cluster.nodes });
    two = await startTargetCoordinator({ kind: "cluster", nodes: cluster.nodes });
    admin = new Cluster(cluster.nodes);
  });
  after(async () => {
    admin.disconnect();
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await one.stop();
    await two.stop();
    await cluster.stop();
  });

  it("grants a set whose names share a slot, and hands it on across coordinators when its busy name frees", async () => {
    const [x, y] = sameSlotNames("cluster-set/account", 2);
    expect(await redisSlot(x))
      .to.equal(slotOf(x))
      .and.to.equal(await redisSlot(y));
    const set = await client(one.address).acquireAll([x, y]);
    expect(set.locks.map((l) => l.fencingToken)).to.deep.equal([1n, 1n]);
    await set.release();
    const holder = await client(two.address).acquire(y);
    const waiting = client(one.address).acquireAll([x, y]);
    const queue = lockKeys("turnstile", x)[2];
    await until(async () => (await admin.zcard(queue)) > 0, "the set queued", 10_000, 5);
    await holder.release();
    const next = await waiting;
    expect(next.tokens.get(y)).to.equal(3n);
    await next.release();
  });

  it("refuses a set across slots with invalid-argument naming two names, their slots and the docs", async () => {
    const [a, b] = ["cluster-set/a", "cluster-set/b"];
    const [slotA, slotB] = [await redisSlot(a), await redisSlot(b)];
    expect(slotA).to.not.equal(slotB);
    let error: TurnstileError | undefined;
    try {
      await client(one.address).acquireAll([a, b]);
    } catch (err) {
      error = err as TurnstileError;
    }
    expect(error?.reason).to.equal("invalid-argument");
    expect(error?.message).to.equal(
      `"${b}": acquire_all.locks: on Redis Cluster every name of a set must hash to one slot, but "${a}" is in ` +
        `slot ${slotA} and "${b}" in slot ${slotB}: give the names one hash tag, e.g. "{orders}/a" and "{orders}/b" ` +
        "(docs/multi-lock.md)",
    );
    expect(await admin.exists(...lockKeys("turnstile", a))).to.equal(0);
  });

  it("grants a set of any names that share a hash tag, on whichever master their tag's slot is", async () => {
    // Without their tag these names span slots (and masters); with it each set is in its tag's slot.
    const plain = ["account/alice", "account/bob", "account/carol"];
    expect(new Set(await Promise.all(plain.map(redisSlot))).size).to.be.above(1);
    for (const tag of ["account", "orders", "x1"]) {
      const names = plain.map((n) => `{${tag}}/${n}`);
      const slots = await Promise.all(names.map(redisSlot));
      expect(new Set([...slots, Number(await admin.cluster("KEYSLOT", tag))]).size, tag).to.equal(1);
      const set = await client(one.address).acquireAll(names);
      const rival = client(two.address).acquireAll(names.slice(1));
      const queue = lockKeys("turnstile", names[1])[2];
      await until(async () => (await admin.zcard(queue)) > 0, "the rival set queued", 10_000, 5);
      await set.release();
      const next = await rival;
      expect([...next.tokens.values()]).to.deep.equal([2n, 2n]);
      await next.release();
    }
  });
});
