import type { DeadlockStep, SessionResponse } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { SessionReplies as reply } from "../../edge/replies/session-replies.js";
import type { HeldWait } from "../../store/wait-registry.js";
import { ServerError } from "../server-error.js";

/** `(session/owner "client")`, or `(session/owner)` once the step was named already. */
function who(w: HeldWait, named: boolean): string {
  return named || w.clientName === "" ? `(${w.sessionId}/${w.owner})` : `(${w.sessionId}/${w.owner} "${w.clientName}")`;
}

/**
 * The DEADLOCK error of the cycle's first wait (the victim), naming the whole cycle in words:
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
  return new ServerError("deadlock", `acquire: deadlock: ${text}; ${outcome}`);
}

/** The cycle as the wire's Failed.deadlock_cycle carries it, starting with the victim. */
export function deadlockSteps(cycle: readonly HeldWait[]): DeadlockStep[] {
  return cycle.map((w) => ({
    sessionId: w.sessionId,
    owner: w.owner,
    clientName: w.clientName,
    requestId: w.requestId,
    name: w.name,
  }));
}

/** The Failed answer of the victim of `cycle`: reason DEADLOCK, the message and the cycle. */
export function deadlockAnswer(cycle: readonly HeldWait[], err: ServerError = deadlockError(cycle)): SessionResponse {
  const [victim] = cycle;
  const answer = reply.failed(victim.requestId, victim.name, err);
  if (answer.kind?.$case === "failed") answer.kind.failed.deadlockCycle = deadlockSteps(cycle);
  return answer;
}
