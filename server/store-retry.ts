import { StoreUnavailableError } from "./store/store-unavailable-error.js";

/** How often a store operation whose outcome is unknown is tried again while the store is unavailable. */
const RETRY_EVERY_MS = 250;

/**
 * Runs `op` again and again while it fails with StoreUnavailableError (a failover, writes the
 * replicas did not acknowledge), until it succeeds, fails otherwise, `stillWanted` turns false or
 * `forMs` have passed; for clean-ups whose first try may or may not have taken effect (a release
 * or withdrawal must happen, or the lease expires and nobody renews it). Never rejects.
 */
export function retryWhileUnavailable(
  op: () => Promise<unknown>,
  forMs: number,
  stillWanted: () => boolean,
  onGiveUp: (err: unknown) => void,
): void {
  const giveUpAt = performance.now() + forMs;
  const attempt = (): void => {
    if (!stillWanted()) return;
    op().catch((err) => {
      if (!(err instanceof StoreUnavailableError) || performance.now() > giveUpAt) return onGiveUp(err);
      setTimeout(attempt, RETRY_EVERY_MS).unref();
    });
  };
  setTimeout(attempt, RETRY_EVERY_MS).unref();
}
