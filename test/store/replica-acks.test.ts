import { expect } from "chai";
import { Redis } from "ioredis";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { ReplicaAcks } from "../../server/store/redis/writes/replica-acks.js";
import type { AcquireArgs } from "../../server/store/store.js";
import { StoreUnacknowledgedError } from "../../server/store/store-unacknowledged-error.js";
import { RecordingListener } from "../harness/recording-listener.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { until } from "../harness/until.js";

function claim(name: string, sessionId: string, requestId: string): AcquireArgs {
  return { name, sessionId, owner: "o", requestId, ttlMs: 30_000, mode: "exclusive", limit: 0, mayWait: true };
}

describe("RedisStore with replica acks (a master and one replica)", () => {
  let master: TestRedis;
  let replica: TestRedis;
  let admin: Redis;
  let replicaAdmin: Redis;
  let stores: RedisStore[] = [];

  before(async () => {
    master = await startRedis({ args: ["--repl-diskless-sync-delay", "0"] });
    replica = await startRedis({ args: ["--replicaof", "127.0.0.1", String(master.port)] });
    admin = new Redis(master.url);
    replicaAdmin = new Redis(replica.url);
    await until(
      async () => /master_link_status:up/.test(await replicaAdmin.info("replication")),
      "the replica to sync",
    );
  });
  beforeEach(async () => {
    await admin.flushall();
    await admin.wait(1, 5000);
  });
  afterEach(async () => {
    // A stopped replica must run again before the next test.
    replica.process.kill("SIGCONT");
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
  });
  after(async () => {
    admin?.disconnect();
    replicaAdmin?.disconnect();
    await Promise.all([replica?.stop(), master?.stop()]);
  });

  async function started(): Promise<[RedisStore, RecordingListener]> {
    const store = new RedisStore({ url: master.url, replicaAcks: 1, replicaAckTimeoutMs: 300 });
    const listener = new RecordingListener();
    stores.push(store);
    await store.start(listener);
    return [store, listener];
  }

  it("resolves an acquire only once the replica holds the grant", async () => {
    const [a] = await started();
    const outcome = await a.acquire(claim("job", "aa01", "r1"));
    expect(outcome).to.deep.equal({ kind: "granted", token: 1n, holdCount: 1 });
    // Read right away, with no wait: the WAIT before the answer means the replica has it.
    expect(await replicaAdmin.zrange(lockKeys("turnstile", "job")[0], 0, "-1")).to.deep.equal(["aa01:o"]);
    expect(a.healthy()).to.equal(true);
  });

  it("rejects with StoreUnacknowledgedError naming the replica count when the replica does not answer, and reads unhealthy", async () => {
    const [a] = await started();
    replica.process.kill("SIGSTOP");
    const err = await a.acquire(claim("job", "aa01", "r1")).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StoreUnacknowledgedError);
    expect((err as StoreUnacknowledgedError).message).to.match(
      /reached 0 of the 1 replicas it must reach within 300 ms/,
    );
    expect(a.healthy()).to.equal(false);
    const healthy = new Promise<void>((resolve) => a.onHealthChange((h) => h && resolve()));
    replica.process.kill("SIGCONT");
    // The probe's WAIT finds the replica back: healthy again without any client write.
    await healthy;
    expect(await replicaAdmin.zrange(lockKeys("turnstile", "job")[0], 0, "-1")).to.deep.equal(["aa01:o"]);
  });

  it("publishes a grant for another coordinator's waiter only once the replica holds it", async () => {
    const [a] = await started();
    const [b, listenerB] = await started();
    await a.acquire(claim("job", "aa01", "r1"));
    expect(await b.acquire(claim("job", "bb02", "r2"))).to.include({ kind: "queued" });
    replica.process.kill("SIGSTOP");
    const err = await a.release({ name: "job", sessionId: "aa01", owner: "o" }, false).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StoreUnacknowledgedError);
    // The grant is in Redis but not acknowledged: B must not hear of it yet.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(listenerB.grants).to.deep.equal([]);
    replica.process.kill("SIGCONT");
    // A later WAIT on A's connection covers the held grant, and A publishes it then.
    await listenerB.until(() => listenerB.grants.length > 0, "B's grant", 10_000);
    expect(listenerB.grants[0]).to.deep.equal({ name: "job", sessionId: "bb02", requestId: "r2", token: 2n });
  });

  it("publishes an acknowledged grant for another coordinator's waiter once, after release resolves", async () => {
    const [a] = await started();
    const [b, listenerB] = await started();
    await a.acquire(claim("job", "aa01", "r1"));
    await b.acquire(claim("job", "bb02", "r2"));
    expect(await a.release({ name: "job", sessionId: "aa01", owner: "o" }, false)).to.deep.equal({
      kind: "released",
      holdCount: 0,
    });
    await listenerB.until(() => listenerB.grants.length > 0, "B's grant");
    expect(listenerB.grants).to.deep.equal([{ name: "job", sessionId: "bb02", requestId: "r2", token: 2n }]);
  });

  it("confirms no write whose WAIT answers after a failover was announced, and holds none of its grants", async () => {
    const redis = new Redis(master.url);
    let generation = 0;
    const held: string[] = [];
    const acks = new ReplicaAcks(
      redis,
      () => 1,
      1000,
      (r) => r.publish("acks", ""),
      () => {},
      "",
      () => generation,
    );
    try {
      await redis.ping();
      // Before any announcement: the replica holds it, the write is confirmed.
      expect(await acks.confirm(() => redis.set("k", "1"))).to.equal("OK");
      const written = acks.confirm(
        () => redis.set("k", "2"),
        (reply) => held.push(String(reply)),
      );
      // Announced after the write went out and before its batch's WAIT answered (it leaves in the check phase).
      generation++;
      const err = await written.then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err).to.be.instanceOf(StoreUnacknowledgedError);
      expect(err?.message).to.match(/a failover of the master was announced before its replicas confirmed the write/);
      // The write is on the master and its replica; only the failover decides that it is not told.
      expect(await replicaAdmin.get("k")).to.equal("2");
      expect(held).to.deep.equal([]);
      // A write of the new generation is confirmed again.
      expect(await acks.confirm(() => redis.set("k", "3"))).to.equal("OK");
    } finally {
      redis.disconnect();
    }
  });
});
