import type { SessionResponse } from "../gen/ts/turnstile/v1/turnstile.js";
import type { StoreMode } from "./store/store.js";

/** One hold of (name, owner) by a session: its token and re-entry count. */
export interface Hold {
  name: string;
  owner: string;
  token: bigint;
  count: number;
  /** `performance.now()` when it was granted on this coordinator; absent for a resumed hold. */
  grantedAtMs?: number;
}

/** An acquire that has not been answered with Acquired or Failed yet. */
export interface Pending {
  session: Session;
  requestId: string;
  name: string;
  owner: string;
  mode: StoreMode;
  limit: number;
  /** Set once the request is answered; every later event about it is ignored. */
  done: boolean;
  /** `performance.now()` when the acquire arrived. */
  receivedAtMs: number;
  /** Set once the acquire was answered Queued. */
  queued?: boolean;
  waitTimer?: NodeJS.Timeout;
}

/**
 * The coordinator's view of one session stream: its lease, holds and pending acquires. It sends
 * through the stream's writer and drops messages once the stream has ended.
 */
export class Session {
  readonly held = new Map<string, Hold>();
  readonly pending = new Map<string, Pending>();
  /** Request ids of releases and proclaims in flight (acquires in flight are the pending map). */
  readonly releasing = new Set<string>();
  ended = false;

  constructor(
    readonly id: string,
    readonly clientName: string,
    readonly ttlMs: number,
    private readonly write: (response: SessionResponse) => void,
  ) {}

  send(response: SessionResponse): void {
    if (!this.ended) this.write(response);
  }

  /** Locks held plus acquires pending: what the per-session limit counts. */
  get lockCount(): number {
    return this.held.size + this.pending.size;
  }

  /** True when the request id belongs to a request still in flight. */
  inFlight(requestId: string): boolean {
    return this.pending.has(requestId) || this.releasing.has(requestId);
  }
}

/** The key of one hold in `Session.held`. */
export function holdKey(name: string, owner: string): string {
  // Names and owners contain no control characters, so NUL cannot be ambiguous.
  return `${name}\u0000${owner}`;
}
