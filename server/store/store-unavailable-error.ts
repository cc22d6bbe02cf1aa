/**
 * The backing store could not be reached or did not answer. The operation may or may not have
 * been applied; callers answer UNAVAILABLE and never infer that a lock was lost from it.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}
