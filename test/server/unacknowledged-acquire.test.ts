import { expect } from "chai";
import { Redis } from "ioredis";
import { pino } from "pino";
import { TurnstileClient, TurnstileError } from "../../client/index.js";
import { Coordinator } from "../../server/coordinator.js";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { HealthClient } from "../harness/health-client.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { until } from "../harness/until.js";

describe("a coordinator with replica acks whose replica stops answering (SIGSTOP)", () => {
  let master: TestRedis;
  let replica: TestRedis;
  let admin: Redis;
  let coordinator: Coordinator;
  let address: string;
  const clients: TurnstileClient[] = [];

  before(async () => {
    master = await startRedis({ args: ["--repl-diskless-sync-delay", "0"] });
    replica = await startRedis({ args: ["--replicaof", "127.0.0.1", String(master.port)] });
    admin = new Redis(master.url);
    // A WAIT after a write: with no write of its own a WAIT also counts a replica that is still
    // loading the initial sync and does not answer GETACK yet.
    await until(async () => {
      await admin.set("sync-probe", "1");
      return Number(await admin.wait(1, 100)) === 1;
    }, "the replica to acknowledge a write");
    coordinator = new Coordinator({
      // 1 s (the default): a shorter WAIT timeout fell short for a running replica under full-suite load.
      store: new RedisStore({ url: master.url, replicaAcks: 1, replicaAckTimeoutMs: 1000 }),
      log: pino({ level: process.env.TEST_LOG ?? "silent" }),
      listen: "127.0.0.1:0",
      shutdownGraceMs: 200,
    });
    address = `127.0.0.1:${await coordinator.start()}`;
  });
  after(async () => {
    replica?.process.kill("SIGCONT");
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await coordinator?.stop();
    admin?.disconnect();
    await Promise.all([replica?.stop(), master?.stop()]);
  });

  it("answers UNAVAILABLE naming the replica count, reads NOT_SERVING, and withdraws the unacknowledged grant", async () => {
    const client = new TurnstileClient(address, { ttlMs: 60_000 });
    clients.push(client);
    // Opens the session (its record is a write too: opened while the replica runs).
    await (await client.acquire("acks/warm-up")).release();
    const health = new HealthClient(address);
    const seen = health.watch();
    const [holders] = lockKeys("turnstile", "acks/held-back");
    try {
      await seen("SERVING");
      replica.process.kill("SIGSTOP");
      // The WAIT falls short (1 s): the acquire is answered while the replica is still stopped.
      const err = await client.acquire("acks/held-back").then(
        () => expect.fail("granted without an acknowledgement"),
        (e: TurnstileError) => e,
      );
      expect(err).to.be.instanceOf(TurnstileError);
      expect(err.reason).to.equal("unavailable");
      expect(err.message).to.match(/0 of the 1 replicas/);
      await seen("NOT_SERVING");
      replica.process.kill("SIGCONT");
      await seen("SERVING");
      // The grant the master made is withdrawn once a WAIT acknowledges that, on the replica too.
      const replicaAdmin = new Redis(replica.url);
      try {
        await until(async () => (await replicaAdmin.zcard(holders)) === 0, "the replica to drop the grant");
        expect(await admin.zcard(holders)).to.equal(0);
      } finally {
        replicaAdmin.disconnect();
      }
      // The unacknowledged grant used token 1; the next one is above it.
      const lock = await client.acquire("acks/held-back");
      expect(lock.fencingToken).to.equal(2n);
      await lock.release();
    } finally {
      replica.process.kill("SIGCONT"); // a failed step must not leave the next test a stopped replica
      health.close();
    }
  });

  it("answers an unacknowledged release, and delivers the grant it made, only once a WAIT covers them", async () => {
    const holderClient = new TurnstileClient(address, { ttlMs: 60_000 });
    const waiterClient = new TurnstileClient(address, { ttlMs: 60_000 });
    clients.push(holderClient, waiterClient);
    const health = new HealthClient(address);
    const seen = health.watch();
    const [holders, , queue] = lockKeys("turnstile", "acks/hand-off");
    try {
      const holder = await holderClient.acquire("acks/hand-off");
      let granted = false;
      const waiting = waiterClient.acquire("acks/hand-off").then((lock) => {
        granted = true;
        return lock;
      });
      await until(async () => (await admin.zcard(queue)) === 1, "the waiter to queue");
      await seen("SERVING");
      replica.process.kill("SIGSTOP");
      let released = false;
      const releasing = holder.release().then(() => {
        released = true;
      });
      // The release ran on the master and granted the waiter there, but no WAIT covers it yet.
      await until(async () => (await admin.zcard(queue)) === 0, "the master to grant the waiter");
      expect(await admin.zcard(holders)).to.equal(1);
      await seen("NOT_SERVING");
      // Three more WAITs fell short (the release's, its retries', the probe's): time for any retry.
      const waits = async () => Number(/cmdstat_wait:calls=(\d+)/.exec(await admin.info("commandstats"))?.[1] ?? 0);
      const before = await waits();
      await until(async () => (await waits()) >= before + 3, "three more WAITs", 10_000, 50);
      // Neither the release nor the grant it made is told before a replica holds them.
      expect([released, granted]).to.deep.equal([false, false]);
      replica.process.kill("SIGCONT");
      await releasing;
      const lock = await waiting;
      expect(lock.fencingToken).to.equal(holder.fencingToken + 1n);
      await lock.release();
    } finally {
      replica.process.kill("SIGCONT"); // a failed step must not leave the next test a stopped replica
      health.close();
    }
  });
});
