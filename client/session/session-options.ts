import type { BackoffOptions } from "../connection/backoff.js";
import type { MonotonicClock } from "../locks/lease-clock.js";
import type { ReleaseRequest } from "../locks/release-request.js";
import type { SessionEvent } from "./session-event.js";

/** How a Session opens and reconnects: TTL, client name, margin, backoff, clock, event listener. */
export interface SessionOptions {
  ttlMs: number;
  clientName: string;
  safetyMarginMs?: number;
  backoff?: BackoffOptions;
  /** How long each attempt waits for `opened` (default DEFAULT_OPEN_TIMEOUT_MS). */
  openTimeoutMs?: number;
  /** The largest request written, encoded (default DEFAULT_MAX_REQUEST_BYTES); a larger one fails alone. */
  maxRequestBytes?: number;
  /** Injectable for tests: jitter source (default Math.random) and monotonic clock. */
  random?: () => number;
  now?: MonotonicClock;
  onEvent?: (event: SessionEvent) => void;
  /** Told each release request for a hold of this session (after the locks' `releaseRequested` aborted). */
  onReleaseRequested?: (request: ReleaseRequest) => void;
}
