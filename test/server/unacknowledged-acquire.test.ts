import { expect } from "chai";
import { Redis } from "ioredis";
import { pino } from "pino";
import { TurnstileClient } from "../../client/index.js";
import { Coordinator } from "../../server/coordinator.js";
import { lockKeys } from "../../server/store/redis/lock-keys.js";
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
      store: new RedisStore({ url: master.url, replicaAcks: 1, replicaAckTimeoutMs: 300 }),
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

  it("tells the client nothing while the grant is unacknowledged, reads NOT_SERVING, and grants once the replica holds it", async () => {
    const client = new TurnstileClient(address, { ttlMs: 60_000 });
    clients.push(client);
    // Opens the session (its record is a write too: opened while the replica runs).
    await (await client.acquire("acks/warm-up")).release();
    const health = new HealthClient(address);
    const seen = health.watch();
    try {
      await seen("SERVING");
      replica.process.kill("SIGSTOP");
      let settled = false;
      const acquiring = client.acquire("acks/held-back").finally(() => {
        settled = true;
      });
      // The WAIT falls short (300 ms): health says so, and the acquire is still unanswered.
      await seen("NOT_SERVING");
      const [holders] = lockKeys("turnstile", "acks/held-back");
      expect(await admin.zcard(holders)).to.equal(1); // the script ran on the master
      expect(settled).to.equal(false);
      replica.process.kill("SIGCONT");
      // Re-run (idempotent by request id) until acknowledged: the same grant, told once.
      const lock = await acquiring;
      await seen("SERVING");
      expect(await admin.zcard(holders)).to.equal(1);
      expect(lock.fencingToken).to.equal(1n);
      await lock.release();
      expect(await admin.zcard(holders)).to.equal(0);
    } finally {
      health.close();
    }
  });
});
