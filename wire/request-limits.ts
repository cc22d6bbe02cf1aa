/**
 * The default bounds a coordinator enforces on what a client asks for (server/config/limits.ts starts from
 * them; `serve --min-ttl` etc. may change them). The CLI shows them in its help and checks the fixed ones
 * (lock-delay, names per set) itself; a coordinator's own refusal names the ones it may change.
 */
export const REQUEST_LIMITS = {
  /** Longest lock name, in UTF-8 bytes; a name must not be empty. */
  maxNameBytes: 256,
  /** Longest owner, request id and client name, in UTF-8 bytes. */
  maxIdBytes: 128,
  /** Shortest session TTL. */
  minTtlMs: 1000,
  /** Longest session TTL. */
  maxTtlMs: 3_600_000,
  /** Longest finite acquire wait; no wait at all means forever. */
  maxWaitMs: 86_400_000,
  /** Most names one AcquireAll may claim (a fixed limit, not a setting: docs/multi-lock.md). */
  maxSetNames: 16,
  /** Longest lock-delay an acquire (or the serve default `--lock-delay`) may set; a fixed bound. */
  maxLockDelayMs: 60_000,
  /** Highest Acquire.priority (0 is the lowest and the default); a fixed bound (docs/elections.md). */
  maxPriority: 100,
  /** Longest RequestRelease reason, in UTF-8 bytes; a fixed bound. */
  maxReasonBytes: 256,
  /**
   * Largest message a coordinator reads (`serve --max-message-bytes`): gRPC ends the whole stream over a
   * larger one, so the clients refuse a larger request themselves (their maxRequestBytes default).
   */
  maxMessageBytes: 64 * 1024,
} as const;
