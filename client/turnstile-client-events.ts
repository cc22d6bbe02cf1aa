import type { ReleaseRequest } from "./locks/release-request.js";
import type { SessionEvent } from "./session/session-event.js";

/** Where a TurnstileClient is (`client.state`); see docs/sessions.md for the transitions. */
export type TurnstileClientState = "idle" | "connecting" | "connected" | "reconnecting" | "expired" | "closed";

/** What a TurnstileClient's session events carry: the session id, the address, and the error if any. */
export type TurnstileSessionEvent = SessionEvent;

/**
 * The events a TurnstileClient emits (it is an EventEmitter):
 * - `connected`: a new session opened (`sessionId`, `address`);
 * - `reconnecting`: its stream broke (`error` says how); locks stay valid by their local lease;
 * - `resumed`: the session was resumed on `address`, with every lock the server still had;
 * - `expired`: the session could not be resumed (unknown or expired on the server, resume secret
 *   refused, or no coordinator reachable within the lease): every lock and pending acquire is lost;
 * - `ended`: the session ended with a fatal status (`error`); its locks and pending acquires are lost;
 * - `closed`: `close()` finished;
 * - `releaseRequested`: someone asks a lock this client holds to let go (also each Lock's
 *   `releaseRequested` signal); nothing is enforced (docs/elections.md).
 */
export interface TurnstileClientEvents {
  connected: [event: TurnstileSessionEvent];
  reconnecting: [event: TurnstileSessionEvent];
  resumed: [event: TurnstileSessionEvent];
  expired: [event: TurnstileSessionEvent];
  ended: [event: TurnstileSessionEvent];
  closed: [];
  releaseRequested: [request: ReleaseRequest];
}
