import { InterceptingCall, type Interceptor } from "@grpc/grpc-js";

type OtelApi = typeof import("@opentelemetry/api");

// @opentelemetry/api is an optional peer: loaded once if the application has it, else tracing is a no-op.
const api: OtelApi | undefined = await import("@opentelemetry/api").catch(() => undefined);

/**
 * The W3C traceparent of the caller's active OpenTelemetry span, or "" when there is none (no
 * span active, or @opentelemetry/api not installed). Sent with each acquire and release, so the
 * coordinator's span for the request joins the caller's trace.
 */
export function currentTraceParent(): string {
  if (!api) return "";
  const c = api.trace.getSpanContext(api.context.active());
  if (!c || !api.isSpanContextValid(c)) return "";
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
