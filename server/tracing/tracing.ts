/** Span attribute values the coordinator records. */
export type SpanAttributes = Record<string, string | number | boolean>;

/** One span the coordinator opened; every method is a no-op when tracing is off. */
export interface TraceSpan {
  /** The span's context as a W3C traceparent ("" when tracing is off), for links from later spans. */
  readonly traceParent: string;
  event(name: string, attributes?: SpanAttributes): void;
  /** Links this span to the span whose W3C traceparent is given (ignored when malformed). */
  link(traceParent: string, attributes?: SpanAttributes): void;
  setAttributes(attributes: SpanAttributes): void;
  /** Ends the span; with `error` its status is ERROR with that message. */
  end(error?: string): void;
}

/** Options of a new span. */
export interface SpanStart {
  /** The caller's W3C traceparent: the span joins that trace (ignored when empty or malformed). */
  traceParent?: string;
  /** "server" for a span answering a remote request; default "internal". */
  kind?: "server" | "internal" | "client";
  attributes?: SpanAttributes;
  /** Only as a child: without a traceParent or a span `within` running, nothing is recorded. */
  childOnly?: boolean;
}

/**
 * The coordinator's tracing: OpenTelemetry when `--otlp-endpoint` is set (otel-tracing.ts, which
 * loads the SDK), NO_TRACING otherwise, which allocates nothing and loads no OpenTelemetry code.
 */
export interface Tracing {
  readonly enabled: boolean;
  /** Starts a span: child of `traceParent` if given, else of the span `within` is running, else a root. */
  start(name: string, options?: SpanStart): TraceSpan;
  /** Runs `fn` with `span` as the parent of the spans it starts (store calls made in `fn`). */
  within<T>(span: TraceSpan, fn: () => T): T;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

const NO_SPAN: TraceSpan = {
  traceParent: "",
  event() {},
  link() {},
  setAttributes() {},
  end() {},
};

/** Tracing off: every span is one shared no-op object. */
export const NO_TRACING: Tracing = {
  enabled: false,
  start: () => NO_SPAN,
  within: (_span, fn) => fn(),
  shutdown: async () => {},
};

const TRACE_PARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A W3C traceparent (version 00) split into its ids, or undefined when malformed or all-zero. */
export function parseTraceParent(
  text: string | undefined,
): { traceId: string; spanId: string; traceFlags: number } | undefined {
  const match = text ? TRACE_PARENT.exec(text) : null;
  if (!match || /^0+$/.test(match[1]) || /^0+$/.test(match[2])) return undefined;
  return { traceId: match[1], spanId: match[2], traceFlags: Number.parseInt(match[3], 16) };
}
