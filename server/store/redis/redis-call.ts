import { StoreUnavailableError } from "../store-unavailable-error.js";

/**
 * Runs one Redis call, turning connection trouble into StoreUnavailableError. A reply error is
 * Redis refusing the command (a bug) and is rethrown as is, unless it is one of the transient
 * states of a server that is starting, failing over or resharding.
 */
export async function redisCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    // Already classified (an unacknowledged write, an unknown epoch): keep its class and message.
    if (err instanceof StoreUnavailableError) throw err;
    if (isConnectionError(err)) throw new StoreUnavailableError(`redis: ${(err as Error).message}`, { cause: err });
    throw err;
  }
}

function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error) || err.name !== "ReplyError") return true;
  return /^(LOADING|READONLY|TRYAGAIN|CLUSTERDOWN|MASTERDOWN|BUSY|NOREPLICAS)/.test(err.message);
}
