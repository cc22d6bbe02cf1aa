import type { AcquireOutcome } from "../../store/store.js";
import type { LockLimits } from "../lock-limits.js";
import type { ValidAcquire } from "../lock-requests.js";
import { ServerError } from "../server-error.js";
import { holdKey, type Session } from "../sessions/session.js";

/** The store's answers that refuse an acquire outright: held (with a zero wait), a SHARED limit or mode conflict. */
export type RefusedAcquire = Extract<AcquireOutcome, { kind: "busy" | "conflict" | "upgrade" }>;

/**
 * The Failed answer to an acquire the store refused, naming the lock, the field at fault and what is
 * in force instead.
 */
export function acquireRefusal(a: ValidAcquire, outcome: RefusedAcquire): ServerError {
  switch (outcome.kind) {
    case "busy":
      if (outcome.delayMs === undefined)
        return new ServerError("busy", `acquire: "${a.name}" is held (wait was zero: tried once)`);
      return new ServerError(
        "busy",
        `acquire: "${a.name}" is delayed: a hold of it ended without a release and its lock-delay has ` +
          `${outcome.delayMs} ms left (wait was zero: tried once)`,
      );
    case "conflict":
      return new ServerError(
        "conflict",
        `acquire.limit: ${limitText(a.limit)} differs from the SHARED limit ${limitText(outcome.limitInForce)} ` +
          `in force on "${a.name}" (it holds until nobody holds or waits for the name)`,
      );
    case "upgrade":
      return new ServerError(
        "conflict",
        `acquire.mode: upgrading a SHARED hold of "${a.name}" to EXCLUSIVE is refused (it deadlocks); release it first`,
      );
  }
}

function limitText(limit: number): string {
  return limit === 0 ? "0 (unlimited)" : String(limit);
}

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
  // A re-entry adds a hold to a lock already counted, not a lock.
  if (session.lockCount >= limits.maxLocksPerSession && !session.held.has(holdKey(a.name, a.owner))) {
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
