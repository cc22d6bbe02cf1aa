import { AsyncLocalStorage } from "node:async_hooks";
import type { Attributes, Link, Span, SpanContext } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { traceRedisCommands } from "./redis-command-spans.js";
import { NO_TRACING, parseTraceParent, type SpanStart, type TraceSpan, type Tracing } from "./tracing.js";

/** Where spans go: an OTLP/HTTP endpoint (base URL), or an exporter (tests: InMemorySpanExporter). */
export type OtelTarget = { endpoint: string } | { exporter: SpanExporter };

/** How long one OTLP export (its retries included) may take: shutdown stays within ~1.5 s of it. */
export const EXPORT_DEADLINE_MS = 1000;

// The batch processor's and the shutdown's own deadlines come later, in that order, so an export that
// fails by its deadline (a retry after ~0.8-1.2 s backoff can end just before it) is reported with its
// cause rather than racing a flush timer to the same millisecond.
const BATCH_DEADLINE_MS = EXPORT_DEADLINE_MS + 250;
const FLUSH_DEADLINE_MS = EXPORT_DEADLINE_MS + 500;

/** Options of startOtelTracing. */
export interface OtelOptions {
  sampleRatio?: number;
  serviceName?: string;
  /** Told of the first export failure (then of none until an export succeeds) and of a flush cut off at shutdown. */
  onProblem?: (message: string) => void;
}

/**
 * Starts OpenTelemetry tracing. The SDK and the exporter are imported here, on demand, so a
 * coordinator without `--otlp-endpoint` never loads them. Spans are batched to OTLP/HTTP at
 * `endpoint`/v1/traces, or passed one by one to a given exporter. Redis commands are traced through
 * ioredis's diagnostics channel while this runs (redis-command-spans.ts).
 */
export async function startOtelTracing(
  target: OtelTarget,
  { sampleRatio = 1, serviceName = "turnstile", onProblem = () => {} }: OtelOptions = {},
): Promise<Tracing> {
  const problems = new ExportProblems(onProblem);
  const api = await import("@opentelemetry/api");
  const sdk = await import("@opentelemetry/sdk-trace");
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  let processor: InstanceType<typeof sdk.BatchSpanProcessor> | InstanceType<typeof sdk.SimpleSpanProcessor>;
  if ("exporter" in target) processor = new sdk.SimpleSpanProcessor({ exporter: target.exporter });
  else {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    const url = `${target.endpoint.replace(/\/+$/, "")}/v1/traces`;
    const exporter = reportingFailures(new OTLPTraceExporter({ url, timeoutMillis: EXPORT_DEADLINE_MS }), problems);
    processor = new sdk.BatchSpanProcessor({ exporter, exportTimeoutMillis: BATCH_DEADLINE_MS });
  }
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    // Head sampling: new traces by ratio; a request in a caller's trace follows the caller's flag.
    sampler: new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(sampleRatio) }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer("turnstile");
  // The parent of spans started without a traceParent; no global context manager is installed.
  const current = new AsyncLocalStorage<Span>();
  const remote = (traceParent: string | undefined): SpanContext | undefined => {
    const parsed = parseTraceParent(traceParent);
    return parsed && { ...parsed, isRemote: true };
  };
  const KINDS = { server: api.SpanKind.SERVER, internal: api.SpanKind.INTERNAL, client: api.SpanKind.CLIENT };
  // Each Redis command made inside a span of ours (a store call) is a client span under it.
  const untraceRedis = traceRedisCommands((name, attributes) => {
    const parent = current.getStore();
    if (!parent) return undefined;
    const span = tracer.startSpan(
      name,
      { kind: api.SpanKind.CLIENT, attributes },
      api.trace.setSpan(api.ROOT_CONTEXT, parent),
    );
    return {
      fail: (message) => span.setStatus({ code: api.SpanStatusCode.ERROR, message }),
      end: () => span.end(),
    };
  });

  class OtelSpan implements TraceSpan {
    readonly traceParent: string;
    constructor(readonly span: Span) {
      const c = span.spanContext();
      this.traceParent = `00-${c.traceId}-${c.spanId}-${c.traceFlags.toString(16).padStart(2, "0")}`;
    }
    event(name: string, attributes?: Attributes): void {
      this.span.addEvent(name, attributes);
    }
    link(traceParent: string, attributes?: Attributes): void {
      const context = remote(traceParent);
      if (context) this.span.addLink({ context, attributes } satisfies Link);
    }
    setAttributes(attributes: Attributes): void {
      this.span.setAttributes(attributes);
    }
    end(error?: string): void {
      if (error !== undefined) this.span.setStatus({ code: api.SpanStatusCode.ERROR, message: error });
      this.span.end();
    }
  }

  return {
    enabled: true,
    start(name: string, options: SpanStart = {}): TraceSpan {
      const parentContext = remote(options.traceParent);
      const parentSpan = current.getStore();
      // Spans that will not be recorded are not made at all: a root that loses the sample draw (or a
      // childOnly span without a parent), a request whose caller's trace is not sampled. Their store
      // calls then run outside any span, so they cost no span either (the SDK's sampler agrees).
      if (!parentContext && !parentSpan && (options.childOnly || Math.random() >= sampleRatio))
        return NO_TRACING.start(name);
      if (parentContext && (parentContext.traceFlags & 1) === 0) return NO_TRACING.start(name);
      let context = api.ROOT_CONTEXT;
      if (parentContext) context = api.trace.setSpanContext(context, parentContext);
      else if (parentSpan) context = api.trace.setSpan(context, parentSpan);
      const kind = KINDS[options.kind ?? "internal"];
      return new OtelSpan(tracer.startSpan(name, { kind, attributes: options.attributes }, context));
    },
    within<T>(span: TraceSpan, fn: () => T): T {
      return span instanceof OtelSpan ? current.run(span.span, fn) : fn();
    },
    async shutdown(): Promise<void> {
      untraceRedis();
      // Bounded whatever the collector does: spans not exported by the deadline are dropped.
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), FLUSH_DEADLINE_MS);
      });
      try {
        const outcome = await Promise.race([provider.shutdown().then(() => "done" as const), deadline]);
        if (outcome === "late")
          problems.report(`spans not flushed within ${FLUSH_DEADLINE_MS} ms at shutdown: dropped`);
      } catch (err) {
        problems.report(`flushing spans at shutdown failed: ${(err as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Export failures, told once per run of failures: the next one after a success is told again. */
class ExportProblems {
  #failing = false;

  constructor(private readonly onProblem: (message: string) => void) {}

  /** Tells `message` unless a failure was told since the last success. */
  report(message: string): void {
    if (this.#failing) return;
    this.#failing = true;
    this.onProblem(message);
  }

  /** An export succeeded: the next failure is told again. */
  succeeded(): void {
    this.#failing = false;
  }
}

/**
 * Wraps an exporter so its failures reach `problems` (the SDK otherwise passes them to
 * OpenTelemetry's global error handler, i.e. nowhere we log).
 */
function reportingFailures(exporter: SpanExporter, problems: ExportProblems): SpanExporter {
  return {
    export(spans, resultCallback) {
      exporter.export(spans, (result) => {
        if (result.error === undefined && result.code === 0) problems.succeeded();
        else problems.report(`exporting spans failed: ${result.error?.message ?? "export refused"}`);
        resultCallback(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
