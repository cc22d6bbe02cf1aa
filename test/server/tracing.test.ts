import { tracingChannel } from "node:diagnostics_channel";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { credentials, Metadata } from "@grpc/grpc-js";
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { expect } from "chai";
import { pino } from "pino";
import { TurnstileClient } from "../../client/turnstile-client.js";
import { LockServiceClient } from "../../gen/ts/turnstile/v1/turnstile.js";
import { Coordinator } from "../../server/coordinator.js";
import { PrometheusMetrics } from "../../server/metrics/prometheus-metrics.js";
import { MemoryStore } from "../../server/store/memory/memory-store.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { startOtelTracing } from "../../server/tracing/otel-tracing.js";
import { tracedStore } from "../../server/tracing/traced-store.js";
import { NO_TRACING, type Tracing } from "../../server/tracing/tracing.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { spawnTurnstile } from "../harness/run-turnstile.js";
import { until } from "../harness/until.js";
import { waitForOutput } from "../harness/wait-for-output.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

/** A caller's span context (as if its own OpenTelemetry SDK had started a span), to run code in. */
function callerContext(): { context: api.Context; traceId: string; spanId: string } {
  const hex = (n: number) => [...Array(n)].map(() => Math.floor(Math.random() * 16).toString(16)).join("");
  const span = { traceId: hex(32), spanId: hex(16), traceFlags: api.TraceFlags.SAMPLED };
  return { context: api.trace.setSpanContext(api.ROOT_CONTEXT, span), ...span };
}

describe("tracing off", () => {
  it("costs nothing: one shared no-op span, and nobody listens on ioredis's command channel", async () => {
    const commands = tracingChannel("ioredis:command");
    expect(NO_TRACING.start("a")).to.equal(NO_TRACING.start("b", { kind: "server" }));
    expect(commands.hasSubscribers).to.equal(false);
    const on = await startOtelTracing({ exporter: new InMemorySpanExporter() });
    expect(commands.hasSubscribers).to.equal(true);
    await on.shutdown();
    expect(commands.hasSubscribers).to.equal(false);
  });
});

describe("tracing with --otlp-sample-ratio", () => {
  it("records no new trace at ratio 0, but follows a caller's sampled flag", async () => {
    const exporter = new InMemorySpanExporter();
    const sampled = await startOtelTracing({ exporter }, { sampleRatio: 0 });
    const id = (n: number, c: string) => c.repeat(n);
    for (const [name, traceParent] of [
      ["root", undefined],
      ["caller sampled", `00-${id(32, "a")}-${id(16, "b")}-01`],
      ["caller not sampled", `00-${id(32, "c")}-${id(16, "d")}-00`],
    ])
      sampled.start(name as string, { kind: "server", traceParent }).end();
    // Read before shutdown: shutting the in-memory exporter down empties it.
    const names = exporter.getFinishedSpans().map((s) => s.name);
    await sampled.shutdown();
    expect(names).to.deep.equal(["caller sampled"]);
  });
});

describe("OpenTelemetry tracing", () => {
  let redis: TestRedis;
  let tracing: Tracing;
  let coordinator: Coordinator;
  let address: string;
  const exporter = new InMemorySpanExporter();
  const clients: TurnstileClient[] = [];
  const client = (name: string) => {
    const c = new TurnstileClient(address, { clientName: name });
    clients.push(c);
    return c;
  };
  /** The finished spans, once `done` finds what it looks for (spans end after their answer is sent). */
  async function spans(done: (all: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
    await until(() => done(exporter.getFinishedSpans()), "the spans", 10_000, 10);
    return exporter.getFinishedSpans();
  }

  before(async () => {
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    redis = await startRedis();
    tracing = await startOtelTracing({ exporter });
    coordinator = new Coordinator({
      store: new RedisStore({ url: redis.url }),
      log: pino({ level: "silent" }),
      listen: "127.0.0.1:0",
      // With metrics too: store spans still name the real store, not the metrics wrapper.
      metrics: new PrometheusMetrics(),
      tracing,
    });
    address = `127.0.0.1:${await coordinator.start()}`;
  });
  afterEach(() => exporter.reset());
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await coordinator.stop();
    await tracing.shutdown();
    await redis.stop();
    api.context.disable();
  });

  it("traces acquire and release in the caller's trace, with the store calls and their Redis commands as children", async () => {
    const caller = callerContext();
    const c = client("traced-holder");
    const lock = await api.context.with(caller.context, () => c.acquire("trace/basic"));
    await api.context.with(caller.context, () => lock.release());
    const all = await spans((s) => s.some((x) => x.name === "turnstile.release"));
    const acquire = all.find((s) => s.name === "turnstile.acquire");
    const release = all.find((s) => s.name === "turnstile.release");
    for (const span of [acquire, release]) {
      expect(span?.spanContext().traceId).to.equal(caller.traceId);
      expect(span?.parentSpanContext?.spanId).to.equal(caller.spanId);
      expect(span?.kind).to.equal(api.SpanKind.SERVER);
      expect(span?.attributes["turnstile.lock"]).to.equal("trace/basic");
    }
    expect(acquire?.attributes["turnstile.fencing_token"]).to.equal(String(lock.fencingToken));
    const script = all.find((s) => s.name === "store acquire");
    expect(script?.parentSpanContext?.spanId).to.equal(acquire?.spanContext().spanId);
    expect(script?.attributes).to.include({ "turnstile.store": "RedisStore", "turnstile.lock": "trace/basic" });
    // ioredis's own span for the script's command (EVAL when Redis did not have the script yet).
    const command = all.find(
      (s) => s.parentSpanContext?.spanId === script?.spanContext().spanId && s.status.code === 0,
    );
    expect(command?.name).to.be.oneOf(["EVALSHA", "EVAL"]);
    expect(command?.kind).to.equal(api.SpanKind.CLIENT);
    expect(command?.attributes).to.include({
      "db.system.name": "redis",
      "server.port": Number(new URL(redis.url).port),
    });
    expect(all.find((s) => s.name === "store release")?.parentSpanContext?.spanId).to.equal(
      release?.spanContext().spanId,
    );
  });

  it("records the queue time as events and links a waiter's span to the span of the holder it waited behind", async () => {
    const [holderTrace, waiterTrace] = [callerContext(), callerContext()];
    const lock = await api.context.with(holderTrace.context, () => client("holder").acquire("trace/queue"));
    const waiting = api.context.with(waiterTrace.context, () => client("waiter").acquire("trace/queue"));
    await waitForQueue(redis.url, "trace/queue", 1);
    await lock.release();
    await waiting;
    const all = await spans((s) => s.filter((x) => x.name === "turnstile.acquire").length === 2);
    const [held, waited] = ["holder", "waiter"].map((_, i) =>
      all.find(
        (s) => s.name === "turnstile.acquire" && s.spanContext().traceId === [holderTrace, waiterTrace][i].traceId,
      ),
    );
    expect(waited?.events.map((e) => e.name)).to.deep.equal(["queued", "granted"]);
    expect(waited?.events[0].attributes).to.deep.equal({ "turnstile.position": 1 });
    expect(waited?.events[1].attributes?.["turnstile.queue_ms"]).to.be.a("number");
    expect(waited?.links.map((l) => [l.context.traceId, l.context.spanId])).to.deep.equal([
      [holderTrace.traceId, held?.spanContext().spanId],
    ]);
    expect(held?.events).to.deep.equal([]);
  });

  it("ends a timed-out acquire's span with an error and the number of holders it waited behind", async () => {
    await client("blocker").acquire("trace/timeout");
    const err = await client("late")
      .acquire("trace/timeout", { waitMs: 100 })
      .catch((e: Error) => e);
    expect(err).to.have.property("reason", "timeout");
    const all = await spans((s) => s.some((x) => x.name === "turnstile.acquire" && x.status.code !== 0));
    const failed = all.find((s) => s.name === "turnstile.acquire" && s.status.code === api.SpanStatusCode.ERROR);
    expect(failed?.status.message).to.match(/^acquire\.wait: 100 ms ran out; waited behind/);
    expect(failed?.attributes["turnstile.blockers"]).to.equal(1);
  });

  it("traces a unary RPC as a server span, child of the traceparent in its metadata", async () => {
    const caller = callerContext();
    const rpc = new LockServiceClient(address, credentials.createInsecure());
    const metadata = new Metadata();
    metadata.set("traceparent", `00-${caller.traceId}-${caller.spanId}-01`);
    await new Promise((resolve, reject) =>
      rpc.describe({ name: "trace/none" }, metadata, (err, res) => (err ? reject(err) : resolve(res))),
    );
    rpc.close();
    const all = await spans((s) => s.some((x) => x.name === "turnstile.v1.LockService/Describe"));
    const describe = all.find((s) => s.name === "turnstile.v1.LockService/Describe");
    expect([describe?.spanContext().traceId, describe?.parentSpanContext?.spanId]).to.deep.equal([
      caller.traceId,
      caller.spanId,
    ]);
    expect(all.find((s) => s.name === "store describe")?.parentSpanContext?.spanId).to.equal(
      describe?.spanContext().spanId,
    );
  });

  it("carries the caller's trace context on the TS client's unary calls (election.leader() is a Describe)", async () => {
    const caller = callerContext();
    const c = client("traced-observer");
    expect(await api.context.with(caller.context, () => c.election("trace/leader").leader())).to.equal(null);
    const all = await spans((s) => s.some((x) => x.name === "turnstile.v1.LockService/Describe"));
    const describe = all.find((s) => s.name === "turnstile.v1.LockService/Describe");
    expect([describe?.spanContext().traceId, describe?.parentSpanContext?.spanId]).to.deep.equal([
      caller.traceId,
      caller.spanId,
    ]);
  });

  it("starts a new trace for a request the caller sent outside any span", async () => {
    const lock = await client("untraced").acquire("trace/untraced");
    await lock.release();
    const all = await spans((s) => s.some((x) => x.name === "turnstile.release"));
    const acquire = all.find((s) => s.name === "turnstile.acquire");
    expect(acquire?.parentSpanContext).to.equal(undefined);
    expect(acquire?.attributes["turnstile.lock"]).to.equal("trace/untraced");
  });

  it("records no span for store calls made outside a request span (timed re-checks, keepalives)", async () => {
    const store = tracedStore(new MemoryStore(), tracing);
    await store.describe("trace/outside");
    const request = tracing.start("request");
    await tracing.within(request, () => store.describe("trace/inside"));
    request.end();
    const names = (await spans((s) => s.some((x) => x.name === "request"))).map((s) => [
      s.name,
      s.attributes["turnstile.lock"],
    ]);
    expect(names).to.deep.equal([
      ["store describe", "trace/inside"],
      ["request", undefined],
    ]);
  });

  it("exports by OTLP/HTTP from `turnstile serve --otlp-endpoint URL`, flushing at shutdown", async () => {
    const bodies: string[] = [];
    const receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on("end", () => {
        bodies.push(`${req.method} ${req.url} ${body}`);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const serve = spawnTurnstile(["serve", "--listen", "127.0.0.1:0", "--otlp-endpoint", endpoint], {
      timeoutMs: 30_000,
    });
    try {
      const [, port] = await waitForOutput(serve.child, /"port":(\d+)/, 10_000);
      const c = new TurnstileClient(`127.0.0.1:${port}`);
      const caller = callerContext();
      await api.context.with(caller.context, () => c.acquire("trace/otlp"));
      await c.close();
      serve.child.kill("SIGTERM");
      expect((await serve.done).code).to.equal(0);
      const sent = bodies.filter((b) => b.startsWith("POST /v1/traces ")).join("\n");
      expect(sent).to.include('"turnstile.acquire"').and.include(caller.traceId);
      expect(sent).to.include('"store acquire"');
    } finally {
      serve.child.kill("SIGKILL");
      receiver.close();
    }
  });
});
