import type { HolderState, LockState, Store } from "../../store/store.js";
import { ServerError } from "../server-error.js";
import type { Pending } from "../sessions/session.js";
import { nameSessions } from "../sessions/session-names.js";

/** Whom a timed-out acquire waited behind: the holders now, and the lock-delay in force (ms left), if any. */
interface WaitedBehind {
  blockers: HolderState[];
  delayMs?: number;
}

/**
 * Whom the waiters of `state` wait behind: every current holder (a FIFO queue waits for its head,
 * and the head for the holders). The one rule that Describe, Watch, a TIMEOUT and the console share.
 */
export function queueBlockers(state: LockState): HolderState[] {
  return state.holders;
}

/**
 * The holders of `name` now, with their client names, and the lock-delay in force: what a timed-out
 * acquire waited behind. Empty when the store cannot be read (the TIMEOUT answer goes out without them).
 */
export async function waitBlockers(
  store: Pick<Store, "describe" | "loadSession">,
  name: string,
): Promise<WaitedBehind> {
  try {
    const state = await nameSessions(store, await store.describe(name));
    return { blockers: queueBlockers(state), delayMs: state.delayMs };
  } catch {
    return { blockers: [] };
  }
}

/** The TIMEOUT error of an acquire whose `waitMs` ran out behind `blockers`, naming them in words and carrying them. */
function timeoutError(waitMs: number, { blockers, delayMs }: WaitedBehind): ServerError {
  const behind = blockers.map((b) => `"${b.owner}" of session ${b.sessionId} (held ${b.heldMs ?? 0} ms)`);
  if (delayMs !== undefined) behind.push(`the lock-delay of a hold that ended without a release (${delayMs} ms left)`);
  const why = `acquire.wait: ${waitMs} ms ran out${behind.length ? `; waited behind ${behind.join(", ")}` : ""}`;
  return new ServerError("timeout", why, { blockedBy: blockers.map((holder) => ({ name: "", holder })) });
}

/**
 * Answers the TIMEOUT of `p`, withdrawn already, naming the holders it waited behind: read after the
 * withdrawal was issued, so no grant can race the answer; without them if they cannot be read.
 */
export function answerTimeout(store: Pick<Store, "describe" | "loadSession">, p: Pending, waitMs: number): void {
  void waitBlockers(store, p.name).then((waited) =>
    p.session.tell.failed(p.requestId, p.name, timeoutError(waitMs, waited)),
  );
}
