import type { ReleaseRequested, Store, TransferOutcome, WaitingClaim } from "../../store/store.js";
import type { ValidRequestRelease, ValidTransfer } from "../lock-requests.js";
import type { OutcomeResolver } from "../outcomes/outcome-resolver.js";
import { ServerError } from "../server-error.js";
import { holdKey, type Session } from "../sessions/session.js";
import type { HoldLedger } from "./hold-ledger.js";

/** What a session's release requests name as their requester: "session <id>" (docs/elections.md). */
export function sessionRequester(sessionId: string): string {
  return `session ${sessionId}`;
}

/** What an operator's release requests name as their requester: "operator", with the identity when there is one. */
export function operatorRequester(identity: string): string {
  return identity === "" ? "operator" : `operator ${identity}`;
}

/**
 * Hand-over (docs/elections.md): a holder's Transfer of its exclusive hold to a waiter, a RequestRelease
 * asking a lock's holders to let go, and such a request reaching a session this coordinator serves.
 * Answers on the session's stream; store failures surface as StoreUnavailableError, request faults as
 * ServerError.
 */
export class HandOvers {
  constructor(
    private readonly store: Store,
    private readonly resolver: OutcomeResolver,
    private readonly ledger: HoldLedger,
  ) {}

  /**
   * Hands the session's exclusive hold of (name, owner) to a waiter and answers Transferred; the
   * successor's grant reaches it as any grant. An unknown store outcome is resolved by re-running the
   * transfer (the store finds its own transfer by the hold's token).
   */
  async transfer(session: Session, t: ValidTransfer): Promise<void> {
    if (session.inFlight(t.requestId)) {
      throw new ServerError("duplicate-request", `transfer.request_id: "${t.requestId}" is already in flight`);
    }
    const key = holdKey(t.name, t.owner);
    const hold = session.held.get(key);
    if (!hold) {
      throw new ServerError("not-held", `transfer: "${t.name}" is not held by owner "${t.owner}" in this session`);
    }
    session.releasing.add(t.requestId);
    hold.releasing = true;
    let unmark: (() => void) | undefined;
    try {
      const args = { ...t, sessionId: session.id, token: hold.token };
      const outcome = await this.resolver.resolve(() => this.store.transfer(args), {
        onUnknown: () => (unmark = session.markInDoubt(key)),
      });
      hold.releasing = false;
      if (outcome === undefined) throw new Error("transfer: resolved without an answer");
      if (outcome.kind === "transferred" || outcome.kind === "not-held") {
        if (session.held.get(key) === hold) this.ledger.forget(session, hold);
      }
      if (outcome.kind !== "transferred") throw refusal(t, outcome);
      session.tell.transferred(t.requestId, t.name, outcome.to.sessionId, outcome.to.owner, outcome.token);
    } finally {
      hold.releasing = false;
      unmark?.();
      session.releasing.delete(t.requestId);
    }
  }

  /** Asks every holder of the name to let go, as this session; answers ReleaseRequestSent, or NOT_FOUND. */
  async requestRelease(session: Session, r: ValidRequestRelease): Promise<void> {
    if (session.inFlight(r.requestId)) {
      throw new ServerError("duplicate-request", `request_release.request_id: "${r.requestId}" is already in flight`);
    }
    session.releasing.add(r.requestId);
    try {
      const requester = sessionRequester(session.id);
      const holders = await this.store.requestRelease({ name: r.name, requester, reason: r.reason });
      if (holders === 0) throw new ServerError("not-found", `request_release: nobody holds "${r.name}"`);
      session.tell.releaseRequestSent(r.requestId, r.name, holders);
    } finally {
      session.releasing.delete(r.requestId);
    }
  }

  /** A release request (broadcast to every coordinator) for a hold `session` may have: told if it has it. */
  releaseRequested(session: Session, r: ReleaseRequested): void {
    if (!session.held.has(holdKey(r.name, r.owner))) return;
    session.tell.releaseRequested(r.name, r.owner, r.requester, r.reason);
  }
}

/** The ServerError of a transfer the store refused: what failed, and for NOT_FOUND who does wait. */
function refusal(t: ValidTransfer, outcome: Exclude<TransferOutcome, { kind: "transferred" }>): ServerError {
  switch (outcome.kind) {
    case "not-held":
      return new ServerError("not-held", `transfer: the lease of "${t.name}" had already ended`);
    case "shared":
      return new ServerError("conflict", `transfer: "${t.name}" is held shared; only an exclusive hold is transferred`);
    case "in-set":
      return new ServerError(
        "conflict",
        `transfer: the successor waits for "${t.name}" as part of an AcquireAll set, which is never granted alone`,
      );
    case "not-waiting": {
      const who =
        outcome.waiting.length === 0 ? "nobody waits" : `waiting: ${outcome.waiting.map(waiterText).join(", ")}`;
      const owner = t.toOwner === "" ? "" : ` owner "${t.toOwner}"`;
      const lead = t.toSessionId === "" ? "no waiter to hand" : `session "${t.toSessionId}"${owner} is not waiting for`;
      return new ServerError("not-found", `transfer: ${lead} "${t.name}"${t.toSessionId === "" ? " to" : ""}; ${who}`);
    }
  }
}

function waiterText(w: WaitingClaim): string {
  return `session "${w.sessionId}" owner "${w.owner}"`;
}
