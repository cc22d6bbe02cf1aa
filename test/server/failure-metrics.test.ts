import { credentials } from "@grpc/grpc-js";
import { expect } from "chai";
import { pino } from "pino";
import {
  FailureReason,
  LockServiceClient,
  type RevokeRequest,
  type RevokeResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { Coordinator } from "../../server/coordinator.js";
import { ACQUIRE_FAILURES, HOLD_LOSSES } from "../../server/engine/failure-labels.js";
import { PrometheusMetrics } from "../../server/metrics/prometheus-metrics.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { parseExposition } from "../harness/prometheus-scrape.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, cancelMsg, keepAliveMsg } from "../harness/requests.js";
import { unary } from "../harness/unary.js";
import { until } from "../harness/until.js";

// The failure counters on a real coordinator and redis-server: every answer Failed to an acquire
// counts once under its reason, every hold that ends without a release once under its reason.
describe("failure metrics: acquires failed, holds lost, revocations", () => {
  let redis: TestRedis;
  let coordinator: Coordinator;
  let address: string;
  let rpc: LockServiceClient;
  const metrics = new PrometheusMetrics();
  const sessions: RawSession[] = [];
  const session = async (ttlMs = 30_000) => {
    const s = new RawSession(address);
    sessions.push(s);
    return Object.assign(s, { id: (await s.open(ttlMs)).sessionId });
  };
  /** The counter `name` by its `reason` label, from the registry's text exposition. */
  const byReason = async (name: string) => {
    const samples = parseExposition(await metrics.render()).samples.filter((s) => s.name === name);
    return Object.fromEntries(samples.map((s) => [s.labels.reason, s.value]));
  };

  before(async () => {
    redis = await startRedis();
    coordinator = new Coordinator({
      store: new RedisStore({ url: redis.url }),
      log: pino({ level: "silent" }),
      listen: "127.0.0.1:0",
      shutdownGraceMs: 200,
      metrics,
    });
    address = `127.0.0.1:${await coordinator.start()}`;
    rpc = new LockServiceClient(address, credentials.createInsecure());
  });
  after(async () => {
    for (const s of sessions) s.close();
    rpc.close();
    await coordinator.stop();
    await redis.stop();
  });

  it("exports every reason at 0 before anything failed, deadlock included", async () => {
    const zeros = (reasons: readonly string[]) => Object.fromEntries(reasons.map((r) => [r, 0]));
    expect(await byReason("turnstile_acquires_failed_total")).to.deep.equal(zeros(ACQUIRE_FAILURES));
    expect(await byReason("turnstile_holds_lost_total")).to.deep.equal(zeros(HOLD_LOSSES));
  });

  it("counts busy, timeout, conflict, invalid and cancelled acquires once each", async () => {
    const holder = await session();
    holder.send(acquireMsg("h", "fm/taken"));
    await holder.next("acquired");
    const other = await session();
    other.send(acquireMsg("busy", "fm/taken", { waitMs: 0 }));
    other.send(acquireMsg("timeout", "fm/taken", { waitMs: 50 }));
    other.send(acquireMsg("waits", "fm/taken", { owner: "w" }));
    await other.next("queued", (q) => q.queued.requestId === "waits");
    other.send(acquireMsg("conflict", "fm/taken", { owner: "w" }));
    other.send(acquireMsg("invalid", ""));
    for (const id of ["busy", "timeout", "conflict", "invalid"])
      await other.next("failed", (f) => f.failed.requestId === id);
    other.send(cancelMsg("waits"));
    await other.next("failed", (f) => f.failed.requestId === "waits");
    expect(await byReason("turnstile_acquires_failed_total")).to.include({
      busy: 1,
      timeout: 1,
      conflict: 1,
      invalid: 1,
      cancelled: 1,
      unavailable: 0,
      internal: 0,
    });
  });

  it("counts the victim of a deadlock once under deadlock, its Failed carrying the cycle", async () => {
    const [a, b] = [await session(), await session()];
    a.send(acquireMsg("a1", "fm/x", { owner: "oa" }));
    b.send(acquireMsg("b1", "fm/y", { owner: "ob" }));
    await Promise.all([a.next("acquired"), b.next("acquired")]);
    a.send(acquireMsg("a2", "fm/y", { owner: "oa" }));
    await a.next("queued");
    b.send(acquireMsg("b2", "fm/x", { owner: "ob" }));
    const failed = await b.next("failed", (f) => f.failed.requestId === "b2", 5000);
    expect(failed.failed.reason).to.equal(FailureReason.FAILURE_REASON_DEADLOCK);
    expect(failed.failed.deadlockCycle.map((s) => [s.sessionId, s.owner, s.requestId, s.name])).to.deep.equal([
      [b.id, "ob", "b2", "fm/x"],
      [a.id, "oa", "a2", "fm/y"],
    ]);
    expect(await byReason("turnstile_acquires_failed_total")).to.include({ deadlock: 1 });
  });

  it("counts a revoke (revocations and a hold lost as revoked), an expired hold and a broken stream's holds", async () => {
    const revoked = await session();
    revoked.send(acquireMsg("r", "fm/revoked", { owner: "h" }));
    await revoked.next("acquired");
    await unary<RevokeRequest, RevokeResponse>(rpc.revoke.bind(rpc), {
      name: "fm/revoked",
      sessionId: revoked.id,
      owner: "h",
    });
    await revoked.next("lost");
    const lapsed = await session(1000);
    lapsed.send(acquireMsg("e", "fm/expired"));
    await lapsed.next("acquired");
    const next = await session();
    next.send(acquireMsg("n", "fm/expired"));
    await next.next("acquired", () => true, 10_000);
    lapsed.send(keepAliveMsg(1));
    await lapsed.next("lost");
    const broken = await session();
    broken.send(acquireMsg("b1", "fm/broken-1"));
    broken.send(acquireMsg("b2", "fm/broken-2"));
    await broken.next("acquired", (a) => a.acquired.requestId === "b1");
    await broken.next("acquired", (a) => a.acquired.requestId === "b2");
    broken.close();
    await until(
      async () => (await byReason("turnstile_holds_lost_total")).session_lost === 2,
      "the broken stream's holds",
    );
    expect(await byReason("turnstile_holds_lost_total")).to.deep.equal({ expired: 1, revoked: 1, session_lost: 2 });
    expect(
      parseExposition(await metrics.render()).samples.find((s) => s.name === "turnstile_revocations_total")?.value,
    ).to.equal(1);
  });
});
