import type { AcquireOutcome } from "../../store/store.js";
import { StoreUnacknowledgedError } from "../../store/store-unacknowledged-error.js";
import { ServerError } from "../server-error.js";
import type { OutcomeResolver } from "./outcome-resolver.js";

/**
 * Runs an acquire through the resolver (an unknown outcome is re-run, idempotently by session and
 * request id, while `wanted()`), except that a WAIT that fell short ends it: then it resolves with
 * the UNAVAILABLE error to answer, naming the replica count the WAIT saw. The script may have queued
 * or granted the claim on the master, so the caller withdraws it (docs/operations.md). A re-entry
 * is re-run until acknowledged instead: withdrawing cannot take back its extra hold count.
 */
export async function acknowledgedAcquire(
  resolver: OutcomeResolver,
  acquire: () => Promise<AcquireOutcome>,
  wanted: () => boolean,
  reentry: boolean,
): Promise<AcquireOutcome | ServerError | undefined> {
  let unacknowledged: StoreUnacknowledgedError | undefined;
  const outcome = await resolver.resolve(
    () =>
      acquire().catch((err) => {
        if (reentry || !(err instanceof StoreUnacknowledgedError)) throw err;
        unacknowledged = err;
        return undefined;
      }),
    { wanted },
  );
  if (!unacknowledged) return outcome;
  const { acked, wanted: replicas } = unacknowledged;
  return new ServerError(
    "unavailable",
    `acquire: not acknowledged: ${acked} of the ${replicas} replicas it must reach held it in time; ` +
      "the claim is withdrawn: retry later",
  );
}
