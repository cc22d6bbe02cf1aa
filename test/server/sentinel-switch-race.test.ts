import { expect } from "chai";
import { Redis } from "ioredis";
import { reviveOnEnd } from "../../server/store/redis/connection/connection-reviver.js";
import { createRedisClient } from "../../server/store/redis/connection/redis-connection.js";
import { grantChannel } from "../../server/store/redis/records/lock-keys.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import type { Grant, StoreListener } from "../../server/store/store.js";
import { type SentinelGroup, startSentinelGroup } from "../harness/sentinel-group.js";
import { notYetOnError, until } from "../harness/until.js";

const MASTER_NAME = "turnstile-failover";

/**
 * The race behind the failover test's stuck run: a connection is asking Sentinel 0 for the master
 * (it is reconnecting) when +switch-master arrives; ioredis's failover detector then disconnects the
 * connector mid-connect, connect() fails with "Connection is closed." and the client ends for good.
 * Sentinel 0 is SIGSTOPped to hold the connector inside that question, so the order is certain.
 */
describe("a +switch-master while a Sentinel connection reconnects", function () {
  this.timeout(120_000);
  let group: SentinelGroup;
  const admins: Redis[] = [];
  let stoppedPid: number | undefined;

  beforeEach(async () => {
    group = await startSentinelGroup(1, 2, { downAfterMs: 60_000, failoverTimeoutMs: 10_000 });
  });
  afterEach(async () => {
    if (stoppedPid) process.kill(stoppedPid, "SIGCONT");
    stoppedPid = undefined;
    for (const a of admins.splice(0)) a.disconnect();
    await group.stop();
  });

  const admin = (port: number) => {
    const r = new Redis({ port, host: "127.0.0.1" });
    r.on("error", () => {});
    admins.push(r);
    return r;
  };

  /** Drives `client` (connected to the master) into the race; resolves once Sentinel 0 answers again. */
  async function race(client: Redis): Promise<void> {
    const [first, second] = group.sentinels.map((s) => admin(s.port));
    const master = admin(await group.masterPort());
    const pid = Number(/process_id:(\d+)/.exec(await first.info("server"))?.[1]);
    // Hold the next "which master?" question: Sentinel 0 is the one the connector asks first.
    process.kill(pid, "SIGSTOP");
    stoppedPid = pid;
    const connector = (client as unknown as { connector: { connecting: boolean } }).connector;
    await master.call("CLIENT", "KILL", "ID", String(await client.client("ID")));
    await until(() => client.status === "connecting" && connector.connecting, "the client to ask Sentinel 0");
    // Refused (NOGOODSLAVE) until Sentinel 1 has fresh INFO from the replica: retry.
    await until(
      notYetOnError(() => second.call("SENTINEL", "FAILOVER", MASTER_NAME).then(() => true)),
      "SENTINEL FAILOVER to be accepted",
      30_000,
      50,
    );
    // The detector's disconnect is the only thing that clears `connecting` mid-connect.
    await until(() => !connector.connecting, "the failover detector to disconnect the connector", 30_000);
    process.kill(pid, "SIGCONT");
    stoppedPid = undefined;
  }

  it("ends a plain ioredis Sentinel client for good (the ioredis behaviour the store guards against)", async () => {
    const client = createRedisClient(
      { kind: "sentinel", sentinels: group.sentinels, masterName: MASTER_NAME },
      {},
      { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => 50 },
    ) as Redis;
    client.on("error", () => {});
    try {
      await client.connect();
      const ended = new Promise((resolve) => client.once("end", resolve));
      await race(client);
      await ended;
      expect(client.status).to.equal("end");
      expect(await client.ping().catch((err: Error) => err.message)).to.equal("Connection is closed.");
    } finally {
      client.disconnect();
    }
  });

  it("reconnects a client that ended, with reviveOnEnd, to the new master", async () => {
    const client = createRedisClient(
      { kind: "sentinel", sentinels: group.sentinels, masterName: MASTER_NAME },
      {},
      { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => 50 },
    ) as Redis;
    client.on("error", () => {});
    const stop = reviveOnEnd(client);
    try {
      await client.connect();
      const ended = new Promise((resolve) => client.once("end", resolve));
      await race(client);
      await ended;
      await until(
        notYetOnError(async () => (await client.ping()) === "PONG"),
        "the client to come back",
        30_000,
      );
      expect(((await client.call("ROLE")) as unknown[])[0]).to.equal("master");
    } finally {
      stop();
      client.disconnect();
    }
  });

  it("leaves RedisStore not healthy while its connection is down and healthy again once it is back", async () => {
    const store = new RedisStore({
      target: { kind: "sentinel", sentinels: group.sentinels, masterName: MASTER_NAME },
    });
    const listener: StoreListener = { grant() {}, revoked() {}, resync() {}, event() {} };
    const seen: boolean[] = [];
    store.onHealthChange((healthy) => seen.push(healthy));
    try {
      await store.start(listener);
      await until(() => store.healthy(), "the store to be healthy");
      const client = (store as unknown as { redis: Redis }).redis;
      const ended = new Promise((resolve) => client.once("end", resolve));
      await race(client);
      await ended;
      expect(store.healthy()).to.equal(false);
      await until(() => store.healthy(), "the store to be healthy again", 30_000);
      expect(seen).to.include(false);
      expect(seen.at(-1)).to.equal(true);
    } finally {
      await store.close();
    }
  });

  it("re-subscribes RedisStore's pub/sub connection after the same race: a grant published to it arrives", async () => {
    const store = new RedisStore({
      target: { kind: "sentinel", sentinels: group.sentinels, masterName: MASTER_NAME },
    });
    const grants: Grant[] = [];
    const listener: StoreListener = { grant: (g) => grants.push(g), revoked() {}, resync() {}, event() {} };
    try {
      await store.start(listener);
      const events = (store as unknown as { events: Redis }).events;
      const ended = new Promise((resolve) => events.once("end", resolve));
      await race(events);
      await ended;
      await until(() => store.healthy(), "the store to be healthy again", 30_000);
      const publisher = admin(await group.masterPort());
      const channel = grantChannel("turnstile", store.coordinatorId);
      await until(
        async () => (await publisher.publish(channel, "0a0b:r1\n7\nrace/lock")) === 1,
        "the pub/sub connection to be subscribed again",
        10_000,
        50,
      );
      await until(() => grants.length > 0, "the published grant to arrive");
      expect(grants[0]).to.deep.include({ name: "race/lock", sessionId: "0a0b", requestId: "r1", token: 7n });
    } finally {
      await store.close();
    }
  });
});
