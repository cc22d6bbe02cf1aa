/**
 * What is known about an operation that failed with StoreUnavailableError: `unchanged` when the
 * command never left the coordinator (nothing was changed), `unknown` when it may have been
 * applied (it timed out or its connection dropped after it was written, or a replica did not
 * acknowledge it in time). Unknown outcomes are resolved by the lock table, never guessed.
 */
export type StoreOutcome = "unchanged" | "unknown";

/**
 * The backing store could not be reached or did not answer. `outcome` says whether the operation
 * may have been applied; callers never infer that a lock was lost from it.
 */
export class StoreUnavailableError extends Error {
  readonly outcome: StoreOutcome;

  constructor(message: string, options?: { cause?: unknown; outcome?: StoreOutcome }) {
    super(message, options);
    this.name = "StoreUnavailableError";
    this.outcome = options?.outcome ?? "unknown";
  }
}

/** True for a store failure after which the operation may or may not have been applied. */
export function outcomeUnknown(err: unknown): boolean {
  return err instanceof StoreUnavailableError && err.outcome === "unknown";
}
