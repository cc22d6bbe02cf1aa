import { readFileSync } from "node:fs";
import { expect } from "chai";
import { pino } from "pino";
import { Coordinator } from "../../server/coordinator.js";
import { STORE_OPERATIONS } from "../../server/metrics/instrumented-store.js";
import { MetricsHttpServer } from "../../server/metrics/metrics-http-server.js";
import { PrometheusMetrics } from "../../server/metrics/prometheus-metrics.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireAllMsg, acquireMsg, keepAliveMsg, releaseMsg } from "../harness/requests.js";
import { spawnTurnstile } from "../harness/run-turnstile.js";
import { until } from "../harness/until.js";
import { waitForOutput } from "../harness/wait-for-output.js";

/** A series key with its labels sorted by name, so tests need not know the exposition's label order. */
function sortedLabels(series: string): string {
  const match = /^([^{]+)\{(.*)\}$/.exec(series);
  if (!match) return series;
  const labels = match[2].match(/[a-z_]+="(?:[^"\\]|\\.)*"/g) ?? [];
  return `${match[1]}{${labels.sort().join(",")}}`;
}

/** Fetches a metrics endpoint and returns its samples by series (name with labels) and the raw text. */
async function scrape(url: string): Promise<{ text: string; value: (series: string) => number | undefined }> {
  const response = await fetch(url);
  expect(response.status).to.equal(200);
  expect(response.headers.get("content-type")).to.match(/^text\/plain; version=0.0.4/);
  const text = await response.text();
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^(\S+) (\S+)$/.exec(line);
    if (match && !line.startsWith("#")) samples.set(sortedLabels(match[1]), Number(match[2]));
  }
  return { text, value: (series) => samples.get(sortedLabels(series)) };
}

describe("Prometheus metrics", () => {
  let redis: TestRedis;
  let coordinator: Coordinator;
  let http: MetricsHttpServer;
  let address: string;
  let url: string;
  const sessions: RawSession[] = [];

  before(async () => {
    redis = await startRedis();
    const metrics = new PrometheusMetrics();
    coordinator = new Coordinator({
      store: new RedisStore({ url: redis.url, commandTimeoutMs: 500 }),
      log: pino({ level: "silent" }),
      listen: "127.0.0.1:0",
      shutdownGraceMs: 200,
      metrics,
    });
    address = `127.0.0.1:${await coordinator.start()}`;
    http = new MetricsHttpServer(metrics);
    url = `http://127.0.0.1:${await http.start("127.0.0.1", 0)}/metrics`;
  });
  after(async () => {
    for (const s of sessions) s.close();
    await http.stop();
    await coordinator.stop();
    await redis.stop();
  });

  it("counts sessions, holds, waiters, grants, hand-offs, waits, renewals and store operations", async () => {
    const a = new RawSession(address);
    const b = new RawSession(address);
    sessions.push(a, b);
    await a.open(10_000);
    await b.open(10_000);
    a.send(acquireMsg("a1", "m/lock"));
    await a.next("acquired");
    b.send(acquireMsg("b1", "m/lock"));
    await b.next("queued");
    a.send(keepAliveMsg(1));
    await a.next("keepAliveAck");
    const during = await scrape(url);
    expect(
      ["turnstile_sessions", "turnstile_locks_held", "turnstile_waiters", "turnstile_store_up"].map(during.value),
    ).to.deep.equal([2, 1, 1, 1]);
    a.send(releaseMsg("a2", "m/lock", "a1"));
    await b.next("acquired");
    const after = await scrape(url);
    expect(after.value('turnstile_grants_total{path="immediate",prefix="m/"}')).to.equal(1);
    expect(after.value('turnstile_grants_total{path="queued",prefix="m/"}')).to.equal(1);
    expect(after.value("turnstile_handoff_seconds_count")).to.equal(1);
    expect(after.value("turnstile_handoff_seconds_sum")).to.be.above(0).and.below(1);
    expect(after.value('turnstile_acquire_wait_seconds_count{prefix="m/"}')).to.equal(1);
    expect(after.value("turnstile_keepalive_renewal_seconds_count")).to.equal(1);
    expect(after.value('turnstile_store_operation_seconds_count{operation="acquire"}')).to.equal(2);
    expect(after.value('turnstile_store_operation_seconds_count{operation="release"}')).to.equal(1);
    expect(after.value('turnstile_store_operation_seconds_bucket{le="+Inf",operation="renew"}')).to.equal(1);
    expect(after.value("turnstile_locks_held")).to.equal(1);
    expect(after.text).to.include("# HELP turnstile_handoff_seconds ");
    expect(after.value("process_cpu_user_seconds_total")).to.be.a("number");
  });

  it("labels grants, waits, holds and queued waiters by name prefix, never by lock name", async () => {
    const [a, b, c] = [new RawSession(address), new RawSession(address), new RawSession(address)];
    sessions.push(a, b, c);
    await Promise.all([a.open(10_000), b.open(10_000), c.open(10_000)]);
    a.send(acquireMsg("a1", "hot/one"));
    await a.next("acquired");
    b.send(acquireMsg("b1", "hot/one"));
    await b.next("queued");
    c.send(acquireMsg("c1", "plain"));
    await c.next("acquired");
    a.send(acquireMsg("a2", "plain"));
    await a.next("queued");
    const during = await scrape(url);
    expect(during.value('turnstile_queued_waiters{prefix="hot/"}')).to.equal(1);
    expect(during.value('turnstile_queued_waiters{prefix="other"}')).to.equal(1);
    expect(during.value('turnstile_oldest_wait_seconds{prefix="hot/"}')).to.be.above(0).and.below(60);
    a.send(releaseMsg("a3", "hot/one", "a1"));
    await b.next("acquired");
    b.send(releaseMsg("b2", "hot/one", "b1"));
    await b.next("released");
    c.send(releaseMsg("c2", "plain", "c1"));
    await a.next("acquired");
    const after = await scrape(url);
    expect(after.value('turnstile_queued_waiters{prefix="hot/"}')).to.equal(undefined);
    expect(after.value('turnstile_oldest_wait_seconds{prefix="hot/"}')).to.equal(undefined);
    expect(after.value('turnstile_grants_total{path="queued",prefix="hot/"}')).to.equal(1);
    expect(after.value('turnstile_grants_total{path="immediate",prefix="other"}')).to.equal(1);
    expect(after.value('turnstile_hold_seconds_count{prefix="hot/"}')).to.equal(2);
    expect(after.value('turnstile_hold_seconds_count{prefix="other"}')).to.equal(1);
    expect(after.value('turnstile_acquire_wait_seconds_count{prefix="other"}')).to.equal(1);
    expect(after.text).to.not.match(/hot\/one|"plain"/);
  });

  it("counts a waiting AcquireAll set in the queued-waiter gauges, once under each prefix it waits on", async () => {
    const [a, b] = [new RawSession(address), new RawSession(address)];
    sessions.push(a, b);
    await Promise.all([a.open(10_000), b.open(10_000)]);
    a.send(acquireMsg("a1", "sets/x"));
    await a.next("acquired");
    b.send(acquireAllMsg("b1", ["sets/x", "sets/y", "batch/z"]));
    await b.next("queued");
    const during = await scrape(url);
    expect(during.value("turnstile_waiters")).to.equal(1);
    expect(during.value('turnstile_queued_waiters{prefix="sets/"}')).to.equal(1);
    expect(during.value('turnstile_queued_waiters{prefix="batch/"}')).to.equal(1);
    expect(during.value('turnstile_oldest_wait_seconds{prefix="sets/"}')).to.be.above(0).and.below(60);
    expect(during.value('turnstile_oldest_wait_seconds{prefix="batch/"}')).to.be.above(0).and.below(60);
    a.send(releaseMsg("a2", "sets/x", "a1"));
    await b.next("acquiredAll");
    const after = await scrape(url);
    expect(after.value('turnstile_queued_waiters{prefix="sets/"}')).to.equal(undefined);
    expect(after.value('turnstile_oldest_wait_seconds{prefix="batch/"}')).to.equal(undefined);
  });

  it("labels by the listed prefixes when given them, and every other name as other", async () => {
    const listed = new PrometheusMetrics({ prefixes: { prefixes: ["billing/", "billing/eu/"] } });
    listed.granted("billing/eu/leader", undefined);
    listed.granted("billing/us/leader", 1500);
    listed.granted("jobs/7", undefined);
    const text = await listed.render();
    expect(text).to.include('turnstile_grants_total{path="immediate",prefix="billing/eu/"} 1');
    expect(text).to.include('turnstile_grants_total{path="queued",prefix="billing/"} 1');
    expect(text).to.include('turnstile_grants_total{path="immediate",prefix="other"} 1');
  });

  it("counts store operations that fail, by operation", async () => {
    const c = new RawSession(address);
    sessions.push(c);
    await c.open(10_000);
    redis.process.kill("SIGSTOP");
    const errors = async () => (await scrape(url)).value('turnstile_store_errors_total{operation="acquire"}');
    try {
      c.send(acquireMsg("c1", "m/down"));
      // The acquire times out (its outcome unknown) and is re-run; the failure is counted at once.
      await until(async () => ((await errors()) ?? 0) >= 1, "a counted acquire failure", 10_000, 50);
    } finally {
      redis.process.kill("SIGCONT");
    }
    await c.next("acquired", (a) => a.acquired.requestId === "c1", 10_000);
    expect(await errors()).to.be.at.least(1);
  });

  it("is served by `turnstile serve --metrics HOST:PORT` at /metrics, and nothing else is", async () => {
    const serve = spawnTurnstile(["serve", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"], {
      timeoutMs: 20_000,
    });
    try {
      const [, port] = await waitForOutput(serve.child, /"metricsPort":(\d+)/, 10_000);
      const { value } = await scrape(`http://127.0.0.1:${port}/metrics`);
      expect([value("turnstile_sessions"), value("turnstile_store_up")]).to.deep.equal([0, 1]);
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).to.equal(404);
    } finally {
      serve.child.kill("SIGTERM");
      expect((await serve.done).code).to.equal(0);
    }
  });
});

describe("docs/operations.md store operations", () => {
  it("lists exactly the operation label values the instrumented store uses", () => {
    const docs = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
    const table = docs.split("| `operation` | the store call |\n|---|---|\n")[1]?.split("\n\n")[0] ?? "";
    const documented = table.split("\n").map((row) => /^\| `([a-z_]+)` \|/.exec(row)?.[1]);
    expect(documented).to.deep.equal([...STORE_OPERATIONS]);
  });
});
