import { createRequire } from "node:module";
import { InterceptingCall, type Interceptor } from "@grpc/grpc-js";

type OtelApi = typeof import("@opentelemetry/api");

// undefined: not looked for yet; null: the application has no @opentelemetry/api.
let api: OtelApi | null | undefined;

/**
 * @opentelemetry/api, loaded on the first request rather than at import, so importing the client
 * loads only grpc-js and the generated code. Any copy works: the API keeps its context manager in
 * one process-wide global, so this copy sees the spans the application's copy made active.
 */
function otelApi(): OtelApi | null {
  if (api === undefined) {
    try {
      api = createRequire(import.meta.url)("@opentelemetry/api") as OtelApi;
    } catch {
      api = null;
    }
  }
  return api;
}

/**
 * The W3C traceparent of the caller's active OpenTelemetry span, or "" when there is none (no
 * span active, or @opentelemetry/api not installed). Sent with each acquire and release, so the
 * coordinator's span for the request joins the caller's trace.
 */
export function currentTraceParent(): string {
  const otel = otelApi();
  if (!otel) return "";
  const c = otel.trace.getSpanContext(otel.context.active());
  if (!c || !otel.isSpanContextValid(c)) return "";
  return `00-${c.traceId}-${c.spanId}-${c.traceFlags.toString(16).padStart(2, "0")}`;
}

/** A grpc-js interceptor that adds the caller's traceparent to the metadata of each call it starts. */
export const traceInterceptor: Interceptor = (options, nextCall) =>
  new InterceptingCall(nextCall(options), {
    start(metadata, listener, next) {
      const traceParent = currentTraceParent();
      if (traceParent) metadata.set("traceparent", traceParent);
      next(metadata, listener);
    },
  });
