import type { HolderState, LockState } from "../../store/store.js";

/**
 * Whom the waiters of `state` wait behind: every current holder (a FIFO queue waits for its head,
 * and the head for the holders). The one rule that Describe, Watch, a TIMEOUT and the console share.
 */
export function queueBlockers(state: LockState): HolderState[] {
  return state.holders;
}
