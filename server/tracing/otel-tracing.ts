import { AsyncLocalStorage } from "node:async_hooks";
import type { Attributes, Link, Span, SpanContext } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { traceRedisCommands } from "./redis-command-spans.js";
import { NO_TRACING, parseTraceParent, type SpanStart, type TraceSpan, type Tracing } from "./tracing.js";

/** Where spans go: an OTLP/HTTP endpoint (base URL), or an exporter (tests: InMemorySpanExporter). */
export type OtelTarget = { endpoint: string } | { exporter: SpanExporter };

/**
 * Starts OpenTelemetry tracing. The SDK and the exporter are imported here, on demand, so a
 * coordinator without `--otlp-endpoint` never loads them. Spans are batched to OTLP/HTTP at
 * `endpoint`/v1/traces, or passed one by one to a given exporter. Redis commands are traced through
 * ioredis's diagnostics channel while this runs (redis-command-spans.ts).
 */
export async function startOtelTracing(
  target: OtelTarget,
  { sampleRatio = 1, serviceName = "turnstile" }: { sampleRatio?: number; serviceName?: string } = {},
): Promise<Tracing> {
  const api = await import("@opentelemetry/api");
  const sdk = await import("@opentelemetry/sdk-trace");
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  let processor: InstanceType<typeof sdk.BatchSpanProcessor> | InstanceType<typeof sdk.SimpleSpanProcessor>;
  if ("exporter" in target) processor = new sdk.SimpleSpanProcessor({ exporter: target.exporter });
  else {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    const url = `${target.endpoint.replace(/\/+$/, "")}/v1/traces`;
    processor = new sdk.BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) });
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
      await provider.shutdown();
    },
  };
}
