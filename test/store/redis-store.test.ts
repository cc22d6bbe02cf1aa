import { expect } from "chai";
import { Redis } from "ioredis";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import type { AcquireArgs } from "../../server/store/store.js";
import { StoreUnavailableError } from "../../server/store/store-unavailable-error.js";
import { RecordingListener } from "../harness/recording-listener.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";

function claim(name: string, sessionId: string, requestId: string): AcquireArgs {
  return {
    name,
    sessionId,
    owner: "o",
    requestId,
    ttlMs: 30_000,
    mode: "exclusive",
    limit: 0,
    mayWait: true,
  };
}

describe("RedisStore", () => {
  describe("on one Redis shared by two coordinators", () => {
    let server: TestRedis;
    let admin: Redis;
    let stores: RedisStore[] = [];
    before(async () => {
      server = await startRedis();
      admin = new Redis(server.url);
    });
    beforeEach(() => admin.flushall());
    afterEach(async () => {
      await Promise.all(stores.map((s) => s.close()));
      stores = [];
    });
    after(async () => {
      admin?.disconnect();
      await server?.stop();
    });

    async function started(): Promise<[RedisStore, RecordingListener]> {
      const store = new RedisStore({ url: server.url });
      const listener = new RecordingListener();
      stores.push(store);
      await store.start(listener);
      return [store, listener];
    }

    it("gives each store its own coordinator id", async () => {
      const [a] = await started();
      const [b] = await started();
      expect(a.coordinatorId).to.not.equal(b.coordinatorId);
    });

    it("grants a waiter queued through store B when store A releases, and B's listener hears it", async () => {
      const [a, listenerA] = await started();
      const [b, listenerB] = await started();
      expect(await a.acquire(claim("job", "aa01", "r1"))).to.deep.equal({
        kind: "granted",
        token: 1n,
        holdCount: 1,
      });
      const queued = await b.acquire(claim("job", "bb02", "r2"));
      expect(queued).to.include({ kind: "queued", position: 1 });
      expect(await a.release({ name: "job", sessionId: "aa01", owner: "o" }, false)).to.deep.equal({
        kind: "released",
        holdCount: 0,
      });
      await listenerB.until(() => listenerB.grants.length > 0, "B's grant");
      expect(listenerB.grants).to.deep.equal([{ name: "job", sessionId: "bb02", requestId: "r2", token: 2n }]);
      expect(listenerA.grants).to.deep.equal([]);
    });

    it("delivers a grant to its own waiter from the script's reply, before release resolves", async () => {
      const [a, listener] = await started();
      await a.acquire(claim("job", "aa01", "r1"));
      await a.acquire(claim("job", "aa02", "r2"));
      await a.release({ name: "job", sessionId: "aa01", owner: "o" }, false);
      expect(listener.grants).to.deep.equal([{ name: "job", sessionId: "aa02", requestId: "r2", token: 2n }]);
    });

    it("reports a waiter's status through check, and renews holds and queue entries", async () => {
      const [a] = await started();
      await a.acquire(claim("job", "aa01", "r1"));
      await a.acquire(claim("job", "aa02", "r2"));
      const waiters = [
        { name: "job", sessionId: "aa02", owner: "o", requestId: "r2" },
        { name: "job", sessionId: "aa09", owner: "o", requestId: "r9" },
      ];
      const checked = await a.check("job", waiters);
      expect(checked.statuses).to.deep.equal([{ kind: "queued" }, { kind: "gone" }]);
      expect(checked.recheckInMs).to.be.within(1, 30_000);
      const locks = [{ name: "job", owners: ["o"], waiters }];
      expect(await a.renew({ sessionId: "aa02", ttlMs: 30_000, locks })).to.deep.equal({
        locks: [{ holds: [null], waiters: ["queued", "gone"] }],
      });
    });

    it("withdraws a waiter, and answers gone for one withdrawn twice", async () => {
      const [a] = await started();
      await a.acquire(claim("job", "aa01", "r1"));
      await a.acquire(claim("job", "aa02", "r2"));
      const waiter = { name: "job", sessionId: "aa02", owner: "o", requestId: "r2" };
      expect(await a.withdraw(waiter, "cancel")).to.deep.equal({ kind: "withdrawn" });
      expect(await a.withdraw(waiter, "cancel")).to.deep.equal({ kind: "gone" });
    });
  });

  describe("when Redis goes away", () => {
    let server: TestRedis | undefined;
    let store: RedisStore | undefined;
    afterEach(async () => {
      await store?.close();
      await server?.stop();
      store = server = undefined;
    });

    it("rejects an acquire with StoreUnavailableError once Redis is stopped", async () => {
      server = await startRedis();
      store = new RedisStore({ url: server.url });
      await store.start(new RecordingListener());
      await server.stop();
      let error: unknown;
      await store.acquire(claim("job", "aa01", "r1")).catch((e) => {
        error = e;
      });
      expect(error).to.be.instanceOf(StoreUnavailableError);
    });

    it("asks the listener to resync after the event connection reconnects", async () => {
      const first = await startRedis();
      server = first;
      store = new RedisStore({ url: first.url });
      const listener = new RecordingListener();
      await store.start(listener);
      expect(listener.resyncs).to.equal(0);
      await first.stop();
      server = await startRedis({ port: first.port });
      await listener.until(() => listener.resyncs > 0, "resync", 10_000);
      expect(listener.resyncs).to.equal(1);
    });

    it("hears published grants again after the event connection reconnects", async () => {
      const first = await startRedis();
      server = first;
      store = new RedisStore({ url: first.url });
      const listener = new RecordingListener();
      await store.start(listener);
      await first.stop();
      server = await startRedis({ port: first.port });
      await listener.until(() => listener.resyncs > 0, "resync", 10_000);
      const other = new RedisStore({ url: server.url });
      try {
        await other.start(new RecordingListener());
        await other.acquire(claim("job", "aa01", "r1"));
        await store.acquire(claim("job", "bb02", "r2"));
        await other.release({ name: "job", sessionId: "aa01", owner: "o" }, false);
        await listener.until(() => listener.grants.length > 0, "grant after reconnect");
        expect(listener.grants[0]).to.deep.include({ sessionId: "bb02", requestId: "r2" });
      } finally {
        await other.close();
      }
    });
  });
});
