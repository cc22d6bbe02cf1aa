import type { Store } from "../store/store.js";
import type { Tracing } from "./tracing.js";

/** The store operations that get a span; the rest (start, health, watch) pass straight through. */
const TRACED = new Set<string>([
  "acquire",
  "acquireSet",
  "release",
  "withdraw",
  "check",
  "renew",
  "revoke",
  "proclaim",
  "transfer",
  "requestRelease",
  "describe",
  "list",
  "saveSession",
  "loadSession",
  "touchSession",
  "deleteSession",
]);

/**
 * A Store whose operations each get a client span `store <operation>` (on Redis one Lua script,
 * so the span is the script's round trip, with ioredis's EVALSHA span under it), as a child of the
 * request span that made the call.
 * Calls made outside any request span (timed re-checks, renewals without a trace) are not traced.
 * Used only when tracing is on.
 */
export function tracedStore(inner: Store, tracing: Tracing): Store {
  const backend = inner.constructor.name;
  return new Proxy(inner, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (typeof property !== "string" || !TRACED.has(property)) return value.bind(target);
      return (...args: unknown[]) => {
        const first = args[0] as string | { name?: string } | undefined;
        const lock = typeof first === "string" ? first : first?.name;
        const span = tracing.start(`store ${property}`, {
          kind: "client",
          childOnly: true,
          attributes: { "turnstile.store": backend, ...(lock === undefined ? {} : { "turnstile.lock": lock }) },
        });
        return (tracing.within(span, () => value.apply(target, args)) as Promise<unknown>).then(
          (result) => {
            span.end();
            return result;
          },
          (err: unknown) => {
            span.end(err instanceof Error ? err.message : String(err));
            throw err;
          },
        );
      };
    },
  });
}
