/** The limits the engine enforces itself (the edge checks the rest before a request reaches it). */
export interface LockLimits {
  /** Locks held plus acquires pending, per session. */
  maxLocksPerSession: number;
}
