/**
 * Waits for `promise`, but rejects with `signal.reason` as soon as the signal aborts (at once if
 * it already has). The underlying work is not cancelled; the abort listener is removed in finally.
 * Without a signal it returns `promise` itself: no wrapper, no extra turns on the message path.
 */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    // The caller gives up on the promise; its later rejection must not go unhandled.
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return raceAbort(promise, signal);
}

async function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
  });
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
