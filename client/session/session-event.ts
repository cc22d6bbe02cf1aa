import type { TurnstileError } from "../turnstile-error.js";

/** Where a session is (docs/sessions.md); 'ended': closed by the client, or ended by a fatal status. */
export type SessionState = "connecting" | "connected" | "reconnecting" | "expired" | "ended";

/** A change a session reports: opened, stream broken, resumed, expired, or ended by an error. */
export interface SessionEvent {
  type: "connected" | "reconnecting" | "resumed" | "expired" | "ended";
  sessionId: string;
  /** The coordinator address of the stream concerned. */
  address: string;
  /** Why the stream broke or the session ended. */
  error?: TurnstileError;
}
