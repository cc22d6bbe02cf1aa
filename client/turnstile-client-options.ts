import type { ChannelCredentials } from "@grpc/grpc-js";
import type { BackoffOptions } from "./connection/backoff.js";
import type { TlsOptions } from "./connection/channel-credentials.js";

/** Options of a TurnstileClient; all optional. */
export interface TurnstileClientOptions {
  /** Requested session TTL in ms; default 15000. Outside the server's bounds (default 1 s – 1 h) the session fails to open with INVALID_ARGUMENT. */
  ttlMs?: number;
  /** Shown to operators; default `<hostname>/<pid>`. */
  clientName?: string;
  /** Subtracted from every lease deadline; default `Math.min(2000, ttlMs / 10)`. */
  safetyMarginMs?: number;
  /** Channel credentials; default insecure (plaintext) unless `tls` is given. Not with `tls` or `token`. */
  credentials?: ChannelCredentials;
  /** Connect over TLS (mTLS with `cert` and `key`); PEM text, see docs/security.md. */
  tls?: TlsOptions;
  /** Bearer token sent as `authorization: Bearer` on every call; needs `tls`. */
  token?: string;
  /**
   * How long each connection attempt waits for the coordinator to answer the session's open, in ms;
   * default 5000. A coordinator that accepts TCP and never answers costs an attempt this much, so a
   * first open (each address once) rejects 'connection' within about addresses × this.
   */
  openTimeoutMs?: number;
  /**
   * The largest request the client sends, encoded, in bytes; default 65536, a coordinator's default
   * `--max-message-bytes`. A coordinator ends the whole session stream over a larger message, so a
   * larger request (a big `value`, say) is refused here instead: its call alone rejects
   * 'invalid-argument', nothing is sent. Match it to the coordinators' `--max-message-bytes`.
   */
  maxRequestBytes?: number;
  /**
   * Whether acquires take the owner of the unit of work they run in (default true): inside a
   * `withLock`/`withLocks` callback the held lock's owner, inside `withOwner(fn)` that scope's; so the
   * naive nested transfer is one (session, owner) and a deadlock is detected (docs/deadlocks.md).
   * false: every acquire without an `owner` gets a fresh one, as before 0.2.0.
   */
  ownersFollowScope?: boolean;
  /** Spacing of reconnect attempts; default 50 ms × 2^n capped at 2 s, with full jitter. */
  backoff?: BackoffOptions;
}

/** Options of `acquire` and `withLock`. */
export interface AcquireOptions {
  /** How long to wait in ms; absent (or Infinity) waits forever, 0 tries once. */
  waitMs?: number;
  /**
   * Reentrancy key, and the node of deadlock detection. Default: the owner of the unit of work the
   * call runs in (a `withLock`/`withLocks` callback's lock, a `withOwner` scope), else a fresh unique
   * owner per call, so acquires of separate tasks exclude each other (docs/deadlocks.md).
   */
  owner?: string;
  /** Opaque value attached to the holder, visible to operators. */
  value?: Uint8Array;
  /** Aborting stops the wait: the acquire rejects with `signal.reason` and is cancelled. */
  signal?: AbortSignal;
  /** Called when the server queues the acquire behind other holders (`position` 1 is the head). */
  onQueued?: (position: number) => void;
  /**
   * Lock-delay in ms (0..60000): if this hold ends without a release (its lease runs out, an operator
   * revokes it, the session is lost), nobody is granted the lock until this long after; a release hands
   * it on at once. Absent: the server's default for the name's prefix (none unless configured); 0: none.
   * For `acquireAll`/`withLocks` it is every hold's of the set (absent: each name's default).
   */
  lockDelayMs?: number;
  /**
   * Queue rank, 0..100 (default 0): a waiter is queued ahead of every waiter of lower priority, FIFO within
   * one priority; a holder is never pre-empted (docs/elections.md). Outside the range the server answers
   * 'invalid-argument' naming acquire.priority.
   */
  priority?: number;
}

/** Options of `tryAcquire`: those of `acquire` without `waitMs`. */
export type TryAcquireOptions = Omit<AcquireOptions, "waitMs">;
