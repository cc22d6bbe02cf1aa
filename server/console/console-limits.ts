/** Bounds of the web console; every one has a safe default. */
export interface ConsoleLimits {
  /** How often each stream re-reads its list and open lock, in ms. */
  refreshMs: number;
  /** Bytes queued towards one slow browser before it is sent nothing more until it caught up. */
  maxBufferBytes: number;
  /** Open console streams per coordinator. */
  maxClients: number;
  /** Locks one list shows at most. */
  maxListed: number;
}

/** Safe defaults for the console's bounds. */
export const DEFAULT_CONSOLE_LIMITS: ConsoleLimits = {
  refreshMs: 1000,
  maxBufferBytes: 256 * 1024,
  maxClients: 64,
  maxListed: 500,
};

/** Counters of one console, for operators and tests. */
export interface ConsoleStats {
  /** Streams open now. */
  clients: number;
  /** Times a stream hit `maxBufferBytes` and was resynchronised after it drained. */
  overflows: number;
  /** The most bytes ever queued towards one stream. */
  peakBufferedBytes: number;
}
