import { channel } from "node:diagnostics_channel";

// The client's points on the path of a request, as diagnostics channels: `npm run bench`'s anatomy
// subscribes and timestamps each on the monotonic clock, beside the coordinator's. Nothing is built
// or published while nobody subscribes: the publishers check `hasSubscribers` first.

/** A request was written to the session's stream: `{ sessionId, kind }` (the SessionRequest kind). */
export const CLIENT_SENT = channel("turnstile:client:sent");
/** A server message was read off the session's stream: `{ sessionId, kind }` (the SessionResponse kind). */
export const CLIENT_RECEIVED = channel("turnstile:client:received");
