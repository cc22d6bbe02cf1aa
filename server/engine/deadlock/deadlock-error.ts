import type { HeldWait } from "../../store/wait-registry.js";
import { ServerError } from "../server-error.js";

/** `(session/owner "client")`, or `(session/owner)` once the step was named already. */
function who(w: HeldWait, named: boolean): string {
  return named || w.clientName === "" ? `(${w.sessionId}/${w.owner})` : `(${w.sessionId}/${w.owner} "${w.clientName}")`;
}

/**
 * The DEADLOCK error of the cycle's first wait (the victim), naming the whole cycle in words and
 * carrying it (the edge sends it as Failed.deadlock_cycle):
 * `acquire: deadlock: (s1/o1 "a") waits for "y" held by (s2/o2 "b"), which waits for "x" held by (s1/o1)`.
 */
export function deadlockError(cycle: readonly HeldWait[]): ServerError {
  const [first] = cycle;
  let text = `${who(first, false)} waits for "${first.name}"`;
  cycle.slice(1).forEach((w) => {
    text += ` held by ${who(w, false)}, which waits for "${w.name}"`;
  });
  text += ` held by ${who(first, true)}`;
  const outcome = "this acquire, the youngest wait of the cycle, was withdrawn; its session keeps its locks";
  return new ServerError("deadlock", `acquire: deadlock: ${text}; ${outcome}`, { deadlockCycle: cycle });
}
