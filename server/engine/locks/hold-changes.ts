import type { Revocation, Store } from "../../store/store.js";
import type { HoldLoss } from "../failure-labels.js";
import type { ValidProclaim } from "../lock-requests.js";
import { ServerError } from "../server-error.js";
import { type Hold, holdKey, type Session } from "../sessions/session.js";

/**
 * Changes to a session's holds while they are held: the holder's own Proclaim (a new value), and
 * an operator's revocation reaching the coordinator that serves the session. Both answer on the
 * session's stream; store failures surface as StoreUnavailableError, request faults as ServerError.
 */
export class HoldChanges {
  /** `lost` is told of every hold this removes and why (for the hold-time and lost-hold metrics). */
  constructor(
    private readonly store: Store,
    private readonly lost: (hold: Hold, reason: HoldLoss) => void = () => {},
  ) {}

  /**
   * Replaces the value of a hold (Proclaim) and answers Proclaimed. A hold whose lease had already
   * ended in the store is reported Lost (expired) and forgotten, and the proclaim fails `not-held`.
   */
  async proclaim(session: Session, p: ValidProclaim): Promise<void> {
    if (session.inFlight(p.requestId)) {
      throw new ServerError("duplicate-request", `proclaim.request_id: "${p.requestId}" is already in flight`);
    }
    const key = holdKey(p.name, p.owner);
    const hold = session.held.get(key);
    if (!hold) {
      throw new ServerError("not-held", `proclaim: "${p.name}" is not held by owner "${p.owner}" in this session`);
    }
    session.releasing.add(p.requestId);
    try {
      const outcome = await this.store.proclaim({ name: p.name, sessionId: session.id, owner: p.owner }, p.value);
      if (outcome === "proclaimed") return session.tell.proclaimed(p.requestId, p.name);
      if (session.held.get(key) === hold) {
        session.held.delete(key);
        this.lost(hold, "expired");
        session.tell.lost(hold.name, hold.owner, hold.token, "expired");
      }
      throw new ServerError("not-held", `proclaim: the lease of "${p.name}" had already ended`);
    } finally {
      session.releasing.delete(p.requestId);
    }
  }

  /**
   * An operator revoked a hold (broadcast to every coordinator): if `session` has it with that
   * token, it is forgotten and reported Lost (revoked). Anything else is ignored.
   */
  revoked(session: Session, r: Revocation): void {
    const key = holdKey(r.name, r.owner);
    const hold = session.held.get(key);
    if (hold?.token !== r.token) return;
    session.held.delete(key);
    this.lost(hold, "revoked");
    session.tell.lost(hold.name, hold.owner, hold.token, "revoked");
  }
}
