/**
 * Resolves once `done()` holds, checking every `everyMs`; rejects naming `what` after `timeoutMs`.
 * Only for states no event announces (a Redis read, a Sentinel's view): everything else awaits its event.
 */
export async function until(
  done: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
  everyMs = 20,
): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > giveUpAt) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** `check` with a rejection read as "not yet": for reads that fail while a failover runs. */
export function notYetOnError(check: () => Promise<boolean>): () => Promise<boolean> {
  return () => check().catch(() => false);
}
