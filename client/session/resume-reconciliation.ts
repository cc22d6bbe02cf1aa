import type { HeldLock } from "../../gen/ts/turnstile/v1/turnstile.js";
import { holderKey } from "../../wire/holder-key.js";

/** A hold the client still has live handles for, as it knows it. */
export interface LiveHold<H> {
  name: string;
  owner: string;
  fencingToken: bigint;
  /** Live (not released, not lost) handles. */
  live: number;
  /** The caller's own record, handed back in the claim. */
  holding: H;
}

/** A release sent (or due) and not yet answered. */
export interface InFlightRelease {
  requestId: string;
  name: string;
  owner: string;
  fencingToken: bigint;
}

/** One (name, owner) the client claims in a resume's `Open.held`. */
export interface HoldClaim<H> {
  name: string;
  owner: string;
  fencingToken: bigint;
  live: number;
  /** The releases in flight for this hold. */
  releaseIds: string[];
  /** Absent when only releases in flight are left of the hold. */
  holding?: H;
}

/** What a resume's answer means for one claim. */
export interface ClaimOutcome {
  /** The server still has the hold with this token: it was renewed with the Open. */
  kept: boolean;
  /** Releases in flight that never arrived, to send again. */
  resend: number;
}

/**
 * Builds the claims of a resume: one per (name, owner) with the live hold's token (or, with only
 * releases left, the newest token they were sent for). Releases for an older token of the same
 * (name, owner) are `stale`: that grant is gone on the server, so they need no answer.
 */
export function buildClaims<H>(
  holds: Iterable<LiveHold<H>>,
  releases: Iterable<InFlightRelease>,
): { claims: HoldClaim<H>[]; stale: string[] } {
  const byKey = new Map<string, HoldClaim<H>>();
  for (const { name, owner, fencingToken, live, holding } of holds) {
    byKey.set(holderKey(name, owner), { name, owner, fencingToken, live, releaseIds: [], holding });
  }
  const releasesByKey = new Map<string, InFlightRelease[]>();
  for (const release of releases) {
    const key = holderKey(release.name, release.owner);
    releasesByKey.set(key, [...(releasesByKey.get(key) ?? []), release]);
  }
  const stale: string[] = [];
  for (const [key, list] of releasesByKey) {
    let claim = byKey.get(key);
    if (claim === undefined) {
      const newest = list.reduce((a, b) => (b.fencingToken > a.fencingToken ? b : a));
      claim = { name: newest.name, owner: newest.owner, fencingToken: newest.fencingToken, live: 0, releaseIds: [] };
      byKey.set(key, claim);
    }
    for (const release of list) {
      if (release.fencingToken === claim.fencingToken) claim.releaseIds.push(release.requestId);
      else stale.push(release.requestId);
    }
  }
  const claims = [...byKey.values()].filter((c) => c.live + c.releaseIds.length > 0);
  return { claims, stale };
}

/** The `Open.held` of a resume: each claim with hold count = live handles + releases in flight. */
export function heldOfClaims(claims: readonly HoldClaim<unknown>[]): HeldLock[] {
  return claims.map(({ name, owner, fencingToken, live, releaseIds }) => ({
    name,
    owner,
    fencingToken,
    holdCount: live + releaseIds.length,
  }));
}

/**
 * Reads a resume's `Opened.held` against the claims (same order as `claims`): a claim is kept
 * when the server lists it with the same token; the server's hold count above the live handles
 * are releases in flight that never arrived (at most as many as were in flight), to send again.
 * A pending acquire of the same (name, owner) may have been granted as a re-entry that also raised
 * the count: such counts are not read as lost releases, since releasing a hold twice is worse
 * than keeping one too many until the session closes.
 */
export function reconcileResume(
  claims: readonly HoldClaim<unknown>[],
  answered: readonly HeldLock[],
  pendingAcquires: Iterable<{ name: string; owner: string }> = [],
): ClaimOutcome[] {
  const byKey = new Map<string, HeldLock>();
  for (const held of answered) {
    const key = holderKey(held.name, held.owner);
    if (!byKey.has(key)) byKey.set(key, held);
  }
  const reentries = new Map<string, number>();
  for (const { name, owner } of pendingAcquires) {
    const key = holderKey(name, owner);
    reentries.set(key, (reentries.get(key) ?? 0) + 1);
  }
  return claims.map((claim) => {
    const key = holderKey(claim.name, claim.owner);
    const held = byKey.get(key);
    if (held === undefined || held.fencingToken !== claim.fencingToken || held.holdCount <= 0) {
      return { kept: false, resend: 0 };
    }
    const unexplained = held.holdCount - claim.live - (reentries.get(key) ?? 0);
    return { kept: true, resend: Math.min(claim.releaseIds.length, Math.max(0, unexplained)) };
  });
}
