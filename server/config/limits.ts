import { REQUEST_LIMITS } from "../../wire/request-limits.js";
import type { LockLimits } from "../engine/lock-limits.js";

/** Bounds on what one client may ask for; every one is checked and named when exceeded. */
export interface Limits extends LockLimits {
  /** Longest lock name, in UTF-8 bytes. */
  maxNameBytes: number;
  /** Longest owner, request id and client name, in UTF-8 bytes. */
  maxIdBytes: number;
  /** Largest holder value, in bytes. */
  maxValueBytes: number;
  minTtlMs: number;
  maxTtlMs: number;
  defaultTtlMs: number;
  /** Longest finite wait; an absent wait means forever. */
  maxWaitMs: number;
  /** Largest SHARED limit. */
  maxSharedLimit: number;
  /** Open sessions per coordinator. */
  maxSessions: number;
  /** Largest message a client may send, in bytes. */
  maxMessageBytes: number;
  /** Messages queued towards one client that does not read before its stream is ended. */
  maxOutboundMessages: number;
  /** Largest List page. */
  maxListPageSize: number;
  /** List page size when the request names none. */
  defaultListPageSize: number;
  /** Open Watch streams per coordinator. */
  maxWatches: number;
  /** Messages queued towards one watcher that does not read before it is resynchronised instead. */
  maxWatchBacklog: number;
  /** Client requests with store work in flight, per coordinator (keepalives are not counted). */
  maxStoreInFlight: number;
  /** Client requests with store work in flight, per session. */
  maxSessionInFlight: number;
  /** Client requests of one session waiting for the store; beyond it RESOURCE_EXHAUSTED. */
  maxSessionQueue: number;
  /** Session streams that have not sent Open yet, per coordinator. */
  maxUnopenedStreams: number;
  /** Time a new session stream has to send Open. */
  openTimeoutMs: number;
  /** Requests a client may send behind Open before it is answered. */
  maxEarlyMessages: number;
  /** Concurrent streams (sessions, watches, calls) per client connection (HTTP/2 setting). */
  maxStreamsPerConnection: number;
}

/** Safe defaults for every limit. */
export const DEFAULT_LIMITS: Limits = {
  maxNameBytes: REQUEST_LIMITS.maxNameBytes,
  maxIdBytes: REQUEST_LIMITS.maxIdBytes,
  maxValueBytes: 4096,
  minTtlMs: REQUEST_LIMITS.minTtlMs,
  maxTtlMs: REQUEST_LIMITS.maxTtlMs,
  defaultTtlMs: 15_000,
  maxWaitMs: REQUEST_LIMITS.maxWaitMs,
  maxSharedLimit: 1_000_000,
  maxLocksPerSession: 1000,
  maxSessions: 10_000,
  maxMessageBytes: REQUEST_LIMITS.maxMessageBytes,
  maxOutboundMessages: 10_000,
  maxListPageSize: 1000,
  defaultListPageSize: 100,
  maxWatches: 10_000,
  maxWatchBacklog: 1000,
  maxStoreInFlight: 256,
  maxSessionInFlight: 32,
  maxSessionQueue: 1000,
  maxUnopenedStreams: 1000,
  openTimeoutMs: 10_000,
  maxEarlyMessages: 100,
  maxStreamsPerConnection: 1000,
};

/**
 * The most bytes an `open` may take: a resume lists every hold of the session (at most
 * maxLocksPerSession, each a name and an owner at their longest, with a token, a count and the
 * protobuf tags and lengths around them), beside a client name, a session id and a resume secret.
 * The coordinator reads a message up to this size, but only an `open` may pass maxMessageBytes.
 */
export function largestOpenBytes(limits: Limits): number {
  const perHold = limits.maxNameBytes + limits.maxIdBytes + 32;
  return limits.maxLocksPerSession * perHold + 3 * limits.maxIdBytes + 64;
}
