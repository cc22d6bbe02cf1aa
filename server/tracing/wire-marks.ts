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
// The store's two points (a lock script sent and answered, the Redis socket flushed) are in
// store/store-marks.ts: the store seam publishes them and imports nothing of tracing/.
