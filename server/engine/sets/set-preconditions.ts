import type { LockLimits } from "../lock-limits.js";
import type { ValidAcquireAll } from "../lock-requests.js";
import { ServerError } from "../server-error.js";
import { holdKey, type Session } from "../sessions/session.js";

/**
 * Throws the ServerError an AcquireAll is refused with before it reaches the store, as
 * checkAcquirePreconditions does for one Acquire: its request id in flight, an earlier claim of one of
 * its names by the owner still being resolved, the session's lock limit (every name counts), the owner
 * already holding or waiting for one of its names (a set takes only names it neither holds nor waits for).
 */
export function checkSetPreconditions(session: Session, a: ValidAcquireAll, limits: LockLimits): void {
  if (session.inFlight(a.requestId)) {
    throw new ServerError("duplicate-request", `acquire_all.request_id: "${a.requestId}" is already in flight`);
  }
  if (session.lockCount + a.locks.length > limits.maxLocksPerSession) {
    throw new ServerError(
      "limit",
      `session: at most ${limits.maxLocksPerSession} locks held or pending per session (this set names ${a.locks.length})`,
    );
  }
  a.locks.forEach(({ name }, i) => {
    const field = `acquire_all.locks[${i}].name`;
    if (session.inDoubt(holdKey(name, a.owner))) {
      throw new ServerError(
        "unavailable",
        `${field}: an earlier claim of "${name}" by owner "${a.owner}" is still being resolved with the store; nothing was changed, retry later`,
      );
    }
    if (session.held.has(holdKey(name, a.owner))) {
      throw new ServerError(
        "conflict",
        `${field}: owner "${a.owner}" already holds "${name}" in this session (a set takes only names it does not hold)`,
      );
    }
    const waiting =
      [...session.pending.values()].find((p) => p.name === name && p.owner === a.owner)?.requestId ??
      [...session.pendingSets.values()].find((s) => s.owner === a.owner && s.locks.some((l) => l.name === name))
        ?.requestId;
    if (waiting !== undefined) {
      throw new ServerError(
        "conflict",
        `${field}: owner "${a.owner}" already waits for "${name}" (request "${waiting}")`,
      );
    }
  });
}
