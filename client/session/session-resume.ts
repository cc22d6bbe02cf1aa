import type { HeldLock, SessionRequest } from "../../gen/ts/turnstile/v1/turnstile.js";
import type { HeldLocks, Holding } from "../locks/held-locks.js";
import { TurnstileError } from "../turnstile-error.js";
import { acquireMessage, type PendingAcquire, remainingWaitMs } from "./requests/acquires-in-flight.js";
import type { ReleasesInFlight } from "./requests/releases-in-flight.js";
import { acquireAllMessage, type PendingSetAcquire } from "./requests/set-acquires-in-flight.js";
import { buildClaims, type HoldClaim, heldOfClaims, reconcileResume } from "./resume-reconciliation.js";

/** The parts of a session a resume works on. */
export interface ResumeContext {
  held: HeldLocks;
  acquires: ReadonlyMap<string, PendingAcquire>;
  /** AcquireAll requests in flight: re-sent like acquires (a set granted before the break is answered again). */
  sets: ReadonlyMap<string, PendingSetAcquire>;
  releases: ReleasesInFlight;
  /** Writes on the resumed stream. */
  send(kind: SessionRequest["kind"]): void;
}

/** What a resume's `open` claims: one claim per hold, and releases for grants already gone. */
export interface ResumeClaims {
  claims: HoldClaim<Holding>[];
  /** Releases for a grant the server no longer counts (an older token of a claimed hold). */
  stale: string[];
}

/**
 * The resume side of a session: `claim()` builds the `held` of a resume's `open` and remembers
 * it, `apply()` reads the coordinator's `opened{resumed: true}` against it (see resumeSession).
 */
export class SessionResumer {
  readonly #ctx: ResumeContext;
  #claims: ResumeClaims = { claims: [], stale: [] };

  constructor(ctx: ResumeContext) {
    this.#ctx = ctx;
  }

  /** Claims every hold with live handles or releases in flight (see buildClaims). */
  claim(): HeldLock[] {
    const holds = this.#ctx.held.holdings().map((holding) => {
      const { name, owner, fencingToken } = holding;
      return { name, owner, fencingToken, live: holding.locks.size, holding };
    });
    this.#claims = buildClaims(holds, this.#ctx.releases.values());
    return heldOfClaims(this.#claims.claims);
  }

  /** Applies the answer to the last claim; `openSentAtMs` and `nowMs` on the session's clock. */
  apply(answered: HeldLock[], openSentAtMs: number, nowMs: number): void {
    const claims = this.#claims;
    this.#claims = { claims: [], stale: [] };
    resumeSession(this.#ctx, claims, { held: answered, openSentAtMs, nowMs });
  }
}

/**
 * Applies a resume's `opened{resumed: true}` (docs/sessions.md): claimed holds the server kept are
 * renewed from the open's send time, the others are lost ('expired'); releases in flight resolve,
 * those that never arrived are sent again; releases due after the open was built go out now; and
 * every pending acquire is re-sent with its request id and what is left of its wait. An acquire
 * whose wait ran out rejects with 'timeout' and is re-sent as a try-once plus cancel, so a grant
 * that raced the break is found and released.
 */
export function resumeSession(
  ctx: ResumeContext,
  { claims, stale }: ResumeClaims,
  opened: { held: HeldLock[]; openSentAtMs: number; nowMs: number },
): void {
  const { held: answered, openSentAtMs } = opened;
  const claimed = new Set([...stale, ...claims.flatMap((claim) => claim.releaseIds)]);
  const later = ctx.releases.values().filter((release) => !claimed.has(release.requestId));
  const acquires = [...ctx.acquires.values()];
  const outcomes = reconcileResume(
    claims,
    answered,
    acquires.map((attempt) => attempt.request),
  );
  claims.forEach((claim, i) => {
    const { kept, resend } = outcomes[i];
    if (claim.holding !== undefined) {
      if (kept) ctx.held.renewed(claim.holding, openSentAtMs);
      else ctx.held.loseOnResume(claim.holding);
    }
    for (let n = 0; n < resend; n += 1) ctx.releases.send(claim);
  });
  for (const requestId of claimed) ctx.releases.settle(requestId);
  for (const { requestId, name, owner } of later) {
    ctx.send({ $case: "release", release: { requestId, name, owner, traceParent: "" } });
  }
  for (const attempt of acquires) resendAcquire(ctx, attempt, opened.nowMs, acquireMessage);
  for (const attempt of ctx.sets.values()) resendAcquire(ctx, attempt, opened.nowMs, acquireAllMessage);
}

function resendAcquire<A extends PendingAcquire | PendingSetAcquire>(
  ctx: ResumeContext,
  attempt: A,
  nowMs: number,
  messageOf: (id: string, request: A["request"], waitMs: number | undefined, trace: string) => SessionRequest["kind"],
): void {
  const { requestId, request, traceParent } = attempt;
  const left = remainingWaitMs(request.waitMs, attempt.firstSentAtMs, nowMs);
  if (left !== "ran-out" && !attempt.abandoned) {
    ctx.send(messageOf(requestId, request, left === "forever" ? undefined : left, traceParent));
    return;
  }
  if (!attempt.abandoned) {
    attempt.abandoned = true;
    const message = `"${request.name}": acquire.wait of ${request.waitMs} ms ran out while reconnecting`;
    attempt.fail(new TurnstileError("timeout", message));
  }
  ctx.send(messageOf(requestId, request, 0, traceParent));
  ctx.send({ $case: "cancel", cancel: { requestId } });
}
