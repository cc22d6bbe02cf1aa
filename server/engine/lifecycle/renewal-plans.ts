import type { Claim, RenewLock } from "../../store/store.js";
import { claimOf, type Hold, type Session } from "../sessions/session.js";

/** What one keepalive renews: each name once, with its owners and queue entries, and the holds behind its owners. */
export interface Renewal {
  /** The store's list; frozen (arrays and entries) when it is kept for the keepalives after (see RenewalPlans). */
  locks: readonly RenewLock[];
  /** Per lock of `locks`, the session's holds in the order of its owners. */
  holds: readonly (readonly Hold[])[];
}

/** A kept Renewal and the holds it was built from, in the order `Session.held` had them. */
interface Kept {
  from: Hold[];
  renewal: Renewal;
}

/**
 * The renewal of each session's next keepalive. A session that only holds (the idle fleet of issue 25:
 * no acquire pending, no hold being released) gets the same frozen Renewal again for as long as its holds
 * are the same Hold objects, so neither this nor the store rebuilds its lock list every keepalive; any
 * change of its holds or a pending acquire makes a new one.
 */
export class RenewalPlans {
  private readonly kept = new WeakMap<Session, Kept>();

  /** The session's holds (those not being released) and queue entries (an AcquireAll's included), by name. */
  of(session: Session): Renewal {
    const idle = session.pending.size === 0 && session.pendingSets.size === 0;
    if (!idle) {
      this.kept.delete(session);
      return renewalOf(session);
    }
    const kept = this.kept.get(session);
    if (kept && sameHolds(kept.from, session.held)) return kept.renewal;
    const from = [...session.held.values()];
    if (from.some((h) => h.releasing)) {
      this.kept.delete(session);
      return renewalOf(session);
    }
    const renewal = frozen(renewalOf(session));
    this.kept.set(session, { from, renewal });
    return renewal;
  }
}

/** True when `held` has exactly the holds of `from`, in that order, and none of them is being released. */
function sameHolds(from: readonly Hold[], held: Map<string, Hold>): boolean {
  if (from.length !== held.size) return false;
  let i = 0;
  for (const h of held.values()) if (h !== from[i++] || h.releasing) return false;
  return true;
}

function renewalOf(session: Session): Renewal {
  const locks: { name: string; owners: string[]; waiters: Claim[] }[] = [];
  const holds: Hold[][] = [];
  const index = new Map<string, number>();
  const at = (name: string): number => {
    let l = index.get(name);
    if (l === undefined) {
      l = locks.push({ name, owners: [], waiters: [] }) - 1;
      index.set(name, l);
      holds.push([]);
    }
    return l;
  };
  for (const h of session.held.values()) {
    if (h.releasing) continue;
    const l = at(h.name);
    locks[l].owners.push(h.owner);
    holds[l].push(h);
  }
  for (const p of session.pending.values()) locks[at(p.name)].waiters.push(claimOf(p));
  // An AcquireAll's entry on each of its names is an ordinary queue entry to renew.
  for (const s of session.pendingSets.values())
    for (const { name } of s.locks)
      locks[at(name)].waiters.push({ name, sessionId: session.id, owner: s.owner, requestId: s.requestId });
  return { locks, holds };
}

/** `renewal` frozen throughout: a store may keep what it derives from a frozen lock list (RenewArgs.locks). */
function frozen(renewal: Renewal): Renewal {
  for (const l of renewal.locks) {
    Object.freeze(l.owners);
    Object.freeze(l.waiters);
    Object.freeze(l);
  }
  for (const h of renewal.holds) Object.freeze(h);
  Object.freeze(renewal.locks);
  Object.freeze(renewal.holds);
  return Object.freeze(renewal);
}
