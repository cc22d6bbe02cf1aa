import { channel } from "node:diagnostics_channel";

// The store's points on the path of a request, as diagnostics channels (the coordinator's others:
// tracing/wire-marks.ts): `npm run bench`'s anatomy subscribes by name and timestamps each. Nothing is
// built or published while nobody subscribes: every publisher checks `hasSubscribers` first.

/** A lock script was handed to the Redis client / answered: `{ phase, op, sessionId, requestId, name }`. */
export const STORE = channel("turnstile:coordinator:store");
/**
 * The Redis command socket was uncorked: the scripts handed over in a tick went out in one write (its
 * releases in front: scripts/runner/lock-scripts.ts). `{}`
 */
export const REDIS_FLUSH = channel("turnstile:coordinator:redis-flush");

/** What STORE publishes. */
interface StoreMark {
  phase: "sent" | "answered";
  op: "acquire" | "release";
  sessionId: string;
  requestId: string;
  name: string;
}

/**
 * Publishes the "sent" mark of a lock script and returns the function that publishes its
 * "answered" mark; undefined (nothing built) while nobody subscribes.
 */
export function storeMark(op: StoreMark["op"], claim: Omit<StoreMark, "phase" | "op">): (() => void) | undefined {
  if (!STORE.hasSubscribers) return undefined;
  const { sessionId, requestId, name } = claim;
  STORE.publish({ phase: "sent", op, sessionId, requestId, name } satisfies StoreMark);
  return () => STORE.publish({ phase: "answered", op, sessionId, requestId, name } satisfies StoreMark);
}
