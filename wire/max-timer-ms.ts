/**
 * The longest delay a Node timer takes: 2^31 - 1 ms (about 24.8 days). setTimeout fires a longer one
 * after 1 ms instead (with a TimeoutOverflowWarning), so the coordinator's settings and the CLI's
 * flags refuse any duration above it that would reach a timer.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** MAX_TIMER_MS as messages name the limit: "2147483647ms (about 24.8d)". */
export const MAX_TIMER_TEXT = `${MAX_TIMER_MS}ms (about 24.8d)`;
