import { channel } from "node:diagnostics_channel";

// The coordinator's points on the path of a request, as diagnostics channels: `npm run bench`'s
// anatomy subscribes (in the coordinator process, through --import) and timestamps each on the
// monotonic clock. Nothing is built or published while nobody subscribes: every publisher checks
// `hasSubscribers` first, so the points cost one property read each.

/**
 * A request message was decoded (and checked by strict-wire): `{ message, startedAt }`, `startedAt`
 * being the monotonic time its bytes reached the deserializer (taken only while subscribed).
 */
export const DECODED = channel("turnstile:coordinator:decoded");
/** A session message was read off the stream: `{ sessionId, kind }` (the SessionRequest kind). */
export const READ = channel("turnstile:coordinator:read");
/** A request's admission lane started it: `{ sessionId, requestId }`. */
export const ADMITTED = channel("turnstile:coordinator:admitted");
/** A response was written to the stream: `{ sessionId, kind }` (the SessionResponse kind). */
export const WRITTEN = channel("turnstile:coordinator:written");
/** A lock script was handed to the Redis client / answered: `{ phase, op, sessionId, requestId, name }`. */
export const STORE = channel("turnstile:coordinator:store");
/** The Redis command socket was uncorked: the scripts of this turn went out in one write. `{}` */
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
