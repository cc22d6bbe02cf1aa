import type { AcquireOutcome } from "../../store/store.js";
import type { ValidAcquire } from "../lock-requests.js";
import { ServerError } from "../server-error.js";

/** The store's answers that refuse an acquire outright: held (with a zero wait), a SHARED limit or mode conflict. */
export type RefusedAcquire = Extract<AcquireOutcome, { kind: "busy" | "conflict" | "upgrade" }>;

/**
 * The Failed answer to an acquire the store refused, naming the lock, the field at fault and what is
 * in force instead.
 */
export function acquireRefusal(a: ValidAcquire, outcome: RefusedAcquire): ServerError {
  switch (outcome.kind) {
    case "busy":
      return new ServerError("busy", `acquire: "${a.name}" is held (wait was zero: tried once)`);
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
