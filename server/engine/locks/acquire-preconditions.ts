import type { LockLimits } from "../lock-limits.js";
import type { ValidAcquire } from "../lock-requests.js";
import { ServerError } from "../server-error.js";
import { holdKey, type Session } from "../sessions/session.js";

/**
 * Throws the ServerError an acquire is refused with before it reaches the store: its request id in
 * flight (`duplicate-request`), an earlier claim of the same (name, owner) still being resolved
 * (`unavailable`), the session's lock limit reached (`limit`), or the same owner already waiting for
 * the name (`conflict`).
 */
export function checkAcquirePreconditions(session: Session, a: ValidAcquire, limits: LockLimits): void {
  if (session.inFlight(a.requestId)) {
    throw new ServerError("duplicate-request", `acquire.request_id: "${a.requestId}" is already in flight`);
  }
  if (session.inDoubt(holdKey(a.name, a.owner))) {
    throw new ServerError(
      "unavailable",
      `acquire: an earlier claim of "${a.name}" by owner "${a.owner}" is still being resolved with the store; nothing was changed, retry later`,
    );
  }
  if (session.lockCount >= limits.maxLocksPerSession) {
    throw new ServerError("limit", `session: at most ${limits.maxLocksPerSession} locks held or pending per session`);
  }
  for (const other of session.pending.values()) {
    if (other.name === a.name && other.owner === a.owner) {
      throw new ServerError(
        "conflict",
        `acquire.owner: "${a.owner}" already waits for "${a.name}" (request "${other.requestId}")`,
      );
    }
  }
}
