import { expect } from "chai";
import { pino } from "pino";
import { HoldLedger } from "../../server/engine/locks/hold-ledger.js";
import { QueueRechecks } from "../../server/engine/locks/queue-rechecks.js";
import type { ServerError } from "../../server/engine/server-error.js";
import { type Pending, Session } from "../../server/engine/sessions/session.js";
import { SILENT_SINK } from "../../server/engine/sessions/session-sink.js";
import { PendingAcquires } from "../../server/engine/waits/pending-acquires.js";
import { MemoryStore } from "../../server/store/memory/memory-store.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import type { AcquireArgs, Grant, Store } from "../../server/store/store.js";
import { StoreOutageLog } from "../../server/store/store-outage-log.js";
import { RecordingListener } from "../harness/recording-listener.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { until } from "../harness/until.js";

/**
 * QueueRechecks against both stores: a re-check fails an acquire as expired only when it was answered
 * Queued. An acquire still being decided (its script re-run after an unknown outcome, e.g. a Cluster
 * master killed under it) is not in the store's queue yet, and the store answers Gone for it; failing
 * it then left the re-run's queue entry behind, granted later to nobody for a whole lease.
 */
describe("QueueRechecks (what a re-check does to this coordinator's acquires)", () => {
  let redis: TestRedis;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  for (const kind of ["redis", "memory"] as const) {
    describe(`on the ${kind} store`, () => {
      let store: Store;
      let pending: PendingAcquires;
      let rechecks: QueueRechecks;
      let grants: Grant[];
      let failures: { requestId: string; error: ServerError }[];
      let session: Session;
      const name = `rq/${kind}`;

      beforeEach(async () => {
        store = kind === "redis" ? new RedisStore({ url: redis.url, prefix: `rq${Date.now()}` }) : new MemoryStore();
        await store.start(new RecordingListener());
        const log = pino({ level: "silent" });
        pending = new PendingAcquires();
        grants = [];
        failures = [];
        session = new Session("5e55104e000000000000000000000001", "test", 30_000, {
          ...SILENT_SINK,
          failed: (requestId, _name, error) => failures.push({ requestId, error }),
        });
        rechecks = new QueueRechecks(store, pending, new HoldLedger(), new StoreOutageLog(log), log, (g) =>
          grants.push(g),
        );
      });
      afterEach(async () => {
        rechecks.clear();
        await store.close();
      });

      /** An acquire of `session` as LockTable registers it before its store call, Queued or not yet. */
      const registered = (requestId: string, queued: boolean): Pending => {
        const p: Pending = {
          session,
          requestId,
          name,
          owner: requestId,
          mode: "exclusive",
          limit: 0,
          priority: 0,
          done: false,
          receivedAtMs: performance.now(),
          queued,
        };
        pending.add(p);
        return p;
      };
      const args = (sessionId: string, requestId: string): AcquireArgs => ({
        name,
        sessionId,
        owner: requestId,
        requestId,
        ttlMs: 30_000,
        mode: "exclusive",
        limit: 0,
        mayWait: true,
      });

      it("fails an acquire answered Queued whose entry is gone, and leaves one still being decided alone", async () => {
        const holder = "5e55104e0000000000000000000000ff";
        expect((await store.acquire(args(holder, "h1"))).kind).to.equal("granted");
        // q1 was answered Queued, but its entry is gone (its lease ran out); q2's store call has not run yet.
        registered("q1", true);
        const deciding = registered("q2", false);
        rechecks.schedule(name, 0);
        await until(() => failures.length > 0, "the re-check to fail the expired acquire");
        expect(failures.map((f) => [f.requestId, f.error.reason])).to.deep.equal([["q1", "expired"]]);
        expect(deciding.done, "the acquire still being decided").to.equal(false);
        expect(pending.get(session.id, "q2")).to.equal(deciding);

        // Its re-run queues it; once the holder lets go, a re-check grants it (the grant it would otherwise miss).
        expect((await store.acquire(args(session.id, "q2"))).kind).to.equal("queued");
        await store.release({ name, sessionId: holder, owner: "h1" }, false);
        rechecks.schedule(name, 0);
        await until(() => grants.length > 0, "the re-check to grant the re-run acquire");
        expect(grants.map((g) => [g.requestId, g.name])).to.deep.equal([["q2", name]]);
        expect(failures).to.have.length(1);
      });
    });
  }
});
