import { credentials } from "@grpc/grpc-js";
import { expect } from "chai";
import {
  FailureReason,
  LockServiceClient,
  LostReason,
  type RevokeRequest,
  type RevokeResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { alertExpr, alertRules } from "../harness/alert-rules.js";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { type Scrape, scrapeTarget } from "../harness/prometheus-scrape.js";
import { evaluate } from "../harness/promql-subset.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireAllMsg, acquireMsg, keepAliveMsg } from "../harness/requests.js";
import { unary } from "../harness/unary.js";
import { until } from "../harness/until.js";

// Each alert of deploy/prometheus/alerts.yml against a real `turnstile serve --metrics` on a real
// redis-server: its expression, evaluated over two real scrapes by the PromQL subset evaluator
// (test/harness/promql-subset.ts), stays quiet across a quiet interval and fires once the test has
// made its condition happen. The store-down alerts come last but one: they stop redis-server for good;
// then the coordinator is killed. Scrapes carry Prometheus's `up` series (scrapeTarget).
describe("deploy/prometheus/alerts.yml against real scrapes", function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let serve: CoordinatorProcess;
  let rpc: LockServiceClient;
  const sessions: RawSession[] = [];
  const tested = new Set<string>();
  const scrape = () => scrapeTarget(serve.metricsUrl ?? "");
  /** An acquireAll set queued behind a hold from the start, and the quiet scrapes taken while it was young. */
  let stuck: { quiet: Scrape; before: Scrape };
  const session = async (ttlMs = 30_000) => {
    const s = new RawSession(serve.address);
    sessions.push(s);
    return Object.assign(s, { id: (await s.open(ttlMs)).sessionId });
  };

  /** Checks that `alert` stays quiet from `quiet` to `before`, then fires from `before` to `after`. */
  function expectFires(alert: string, quiet: Scrape, before: Scrape, after: Scrape): void {
    const expr = alertExpr(alert);
    expect(evaluate(expr, quiet, before), `${alert} on a quiet interval: ${expr}`).to.deep.equal([]);
    expect(evaluate(expr, before, after), `${alert} once its condition happened: ${expr}`).to.not.deep.equal([]);
    tested.add(alert);
  }

  before(async () => {
    redis = await startRedis();
    serve = await spawnCoordinator(redis.url, ["--metrics", "127.0.0.1:0", "--redis-command-timeout", "500ms"]);
    serve.process.stdout?.resume();
    serve.process.stderr?.resume();
    rpc = new LockServiceClient(serve.address, credentials.createInsecure());
    // Ages while the other tests run: TurnstileOldestWaitLong checks it once it has waited over 30 s.
    const holder = await session(120_000);
    holder.send(acquireMsg("s1", "alert/stuck/a"));
    await holder.next("acquired");
    const waiter = await session(120_000);
    waiter.send(acquireAllMsg("s2", ["alert/stuck/a", "alert/stuck/b"]));
    await waiter.next("queued");
    stuck = { quiet: await scrape(), before: await scrape() };
  });
  after(async () => {
    for (const s of sessions) s.close();
    rpc?.close();
    await serve?.kill();
    await redis?.stop();
  });

  it("TurnstileAcquireTimeouts: fires after 6 acquires gave up waiting", async () => {
    const holder = await session();
    holder.send(acquireMsg("h1", "alert/timeout"));
    await holder.next("acquired");
    const quiet = await scrape();
    const before = await scrape();
    const waiter = await session();
    for (let i = 0; i < 6; i++) {
      waiter.send(acquireMsg(`w${i}`, "alert/timeout", { waitMs: 50 }));
      const failed = await waiter.next("failed", (f) => f.failed.requestId === `w${i}`);
      expect(failed.failed.reason).to.equal(FailureReason.FAILURE_REASON_TIMEOUT);
    }
    expectFires("TurnstileAcquireTimeouts", quiet, before, await scrape());
  });

  it("TurnstileHoldsRevoked: fires after an operator revoked a hold", async () => {
    const holder = await session();
    holder.send(acquireMsg("r1", "alert/revoke", { owner: "h" }));
    await holder.next("acquired");
    const quiet = await scrape();
    const before = await scrape();
    await unary<RevokeRequest, RevokeResponse>(rpc.revoke.bind(rpc), {
      name: "alert/revoke",
      sessionId: holder.id,
      owner: "h",
    });
    expect((await holder.next("lost")).lost.reason).to.equal(LostReason.LOST_REASON_REVOKED);
    expectFires("TurnstileHoldsRevoked", quiet, before, await scrape());
  });

  it("TurnstileHoldsExpired: fires after a holder's lease ran out (no keepalives) and it was told Lost", async () => {
    const quiet = await scrape();
    const before = await scrape();
    const holder = await session(1000);
    holder.send(acquireMsg("e1", "alert/expire"));
    await holder.next("acquired");
    // A waiter makes the coordinator re-check the lock at the holder's lease deadline.
    const waiter = await session();
    waiter.send(acquireMsg("e2", "alert/expire"));
    await waiter.next("acquired", () => true, 10_000);
    // The holder's next keepalive finds its hold gone: it is told Lost{EXPIRED}.
    holder.send(keepAliveMsg(1));
    expect((await holder.next("lost")).lost.reason).to.equal(LostReason.LOST_REASON_EXPIRED);
    expectFires("TurnstileHoldsExpired", quiet, before, await scrape());
  });

  it("TurnstileKeepaliveRenewalsFailing: fires after a keepalive renewal failed while Redis was stopped", async () => {
    const holder = await session();
    holder.send(acquireMsg("k1", "alert/renew"));
    await holder.next("acquired");
    const quiet = await scrape();
    const before = await scrape();
    redis.process.kill("SIGSTOP");
    try {
      holder.send(keepAliveMsg(1));
      const failures = async () =>
        (await scrape()).samples.find((s) => s.name === "turnstile_keepalive_renewal_failures_total")?.value ?? 0;
      await until(async () => (await failures()) >= 1, "a failed keepalive renewal", 10_000, 50);
    } finally {
      redis.process.kill("SIGCONT");
    }
    expectFires("TurnstileKeepaliveRenewalsFailing", quiet, before, await scrape());
  });

  it("TurnstileOldestWaitLong: fires once an acquireAll set has waited over 30 s", async function () {
    this.timeout(60_000);
    const oldest = async () =>
      (await scrape()).samples.find((s) => s.name === "turnstile_oldest_wait_seconds" && s.labels.prefix === "alert/")
        ?.value ?? 0;
    await until(async () => (await oldest()) > 30, "the set to wait over 30 s", 45_000, 500);
    expectFires("TurnstileOldestWaitLong", stuck.quiet, stuck.before, await scrape());
  });

  it("TurnstileStoreDown and TurnstileAcquiresUnavailable: fire once redis-server is gone and an acquire was refused", async () => {
    const client = await session();
    const quiet = await scrape();
    const before = await scrape();
    await redis.stop();
    const storeUp = async () => (await scrape()).samples.find((s) => s.name === "turnstile_store_up")?.value;
    await until(async () => (await storeUp()) === 0, "turnstile_store_up 0", 10_000, 50);
    client.send(acquireMsg("u1", "alert/unavailable", { waitMs: 0 }));
    const failed = await client.next("failed", () => true, 10_000);
    expect(failed.failed.reason).to.equal(FailureReason.FAILURE_REASON_UNAVAILABLE);
    const after = await scrape();
    expectFires("TurnstileStoreDown", quiet, before, after);
    expectFires("TurnstileAcquiresUnavailable", quiet, before, after);
  });

  it("TurnstileCoordinatorDown: fires once the coordinator cannot be scraped (killed)", async () => {
    const quiet = await scrape();
    const before = await scrape();
    await serve.kill();
    expectFires("TurnstileCoordinatorDown", quiet, before, await scrape());
  });

  it("has tested every alert in the rule file", () => {
    expect([...tested].sort()).to.deep.equal(
      alertRules()
        .map((r) => r.alert)
        .sort(),
    );
  });
});
