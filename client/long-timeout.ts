import { MAX_TIMER_MS } from "../wire/max-timer-ms.js";

/** A timer started by setLongTimeout. */
export interface LongTimeout {
  /** Stops the timer; `fn` is not called (a no-op once it was). */
  clear(): void;
}

/**
 * Calls `fn` once after `delayMs`, however long: past MAX_TIMER_MS it waits in steps of at most
 * MAX_TIMER_MS, so a user's duration (a wait of 30 days, a long timeout) never fires at once.
 */
export function setLongTimeout(fn: () => void, delayMs: number): LongTimeout {
  let timer: NodeJS.Timeout | undefined;
  const arm = (leftMs: number) => {
    const step = leftMs > MAX_TIMER_MS ? () => arm(leftMs - MAX_TIMER_MS) : fn;
    timer = setTimeout(step, Math.min(leftMs, MAX_TIMER_MS));
  };
  arm(delayMs);
  return { clear: () => clearTimeout(timer) };
}
