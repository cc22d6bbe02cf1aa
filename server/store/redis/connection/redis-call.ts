import { StoreUnavailableError } from "../../store-unavailable-error.js";

// ioredis rejects with this before writing anything when the socket is down (offline queue off).
const NOT_SENT = /^Stream isn't writeable/;

/**
 * Runs one Redis call, turning connection trouble into StoreUnavailableError. A reply error is
 * Redis refusing the command (a bug) and is rethrown as is, unless it is one of the transient
 * states of a server that is starting, failing over or resharding (refused: nothing changed; MOVED
 * and ASK reach here only from a write sent straight to a Cluster master that no longer owns the slot).
 * A command that timed out or whose connection closed may still run (a stalled server runs what
 * is on its socket when it resumes): its outcome is `unknown`.
 */
export function redisCall<T>(call: () => Promise<T>): Promise<T> {
  // No async wrapper: a reply passes straight through, only a failure is looked at.
  try {
    return call().then(undefined, classify);
  } catch (err) {
    return Promise.reject(err).then(undefined, classify);
  }
}

function classify(err: unknown): never {
  // Already classified (an unacknowledged write, an unknown epoch): keep its class and message.
  if (err instanceof StoreUnavailableError) throw err;
  if (!(err instanceof Error)) throw new StoreUnavailableError(`redis: ${String(err)}`, { cause: err });
  if (err.name === "ReplyError") {
    if (!/^(LOADING|READONLY|TRYAGAIN|CLUSTERDOWN|MASTERDOWN|BUSY|NOREPLICAS|MOVED|ASK)/.test(err.message)) throw err;
    throw new StoreUnavailableError(`redis: ${err.message}`, { cause: err, outcome: "unchanged" });
  }
  const outcome = NOT_SENT.test(err.message) ? "unchanged" : "unknown";
  throw new StoreUnavailableError(`redis: ${err.message}`, { cause: err, outcome });
}
