import type { HolderState, LockEvent, LockState, LockSummary } from "../store/store.js";
import type { WaiterAge } from "./waiter-clock.js";

/** Longest holder value the console shows, in characters (the rest is cut with "…"). */
export const MAX_VALUE_CHARS = 200;

/** One holder as the page shows it; the token is a decimal string (it can exceed 2^53). */
export interface HolderView {
  sessionId: string;
  owner: string;
  token: string;
  count: number;
  mode: string;
  leaseMs: number;
  value: string;
}

/** A holder a waiter waits behind. */
export interface BlockerView {
  sessionId: string;
  owner: string;
  token: string;
}

/** One waiter as the page shows it. */
export interface WaiterView {
  sessionId: string;
  owner: string;
  requestId: string;
  position: number;
  mode: string;
  leaseMs: number;
  waitedMs: number;
  waitedAtLeast: boolean;
  /** The holders it waits behind. */
  blockedBy: BlockerView[];
}

/** One lock's holders and queue as the page shows it, with what the caller may do to it. */
export interface LockView {
  name: string;
  version: string;
  mode: string;
  limit: number;
  holders: HolderView[];
  waiters: WaiterView[];
  mayRevoke: boolean;
}

/** One holder change as the page's change log shows it. */
export interface ChangeView {
  version: string;
  change: LockEvent["change"];
  owner: string;
  sessionId: string;
  token: string;
  holdersLeft: number;
}

/** Builders of the JSON the console's stream sends, from the store's view of a lock. */
export const LockViews = {
  lock(state: LockState, ages: readonly WaiterAge[], mayRevoke: boolean): LockView {
    const blockedBy = blockersOf(state);
    return {
      name: state.name,
      version: String(state.version),
      mode: state.holders[0]?.mode ?? "free",
      limit: state.limit ?? 0,
      holders: state.holders.map(holderView),
      waiters: state.waiters.map((w, i) => ({
        sessionId: w.sessionId,
        owner: w.owner,
        requestId: w.requestId,
        position: w.position,
        mode: w.mode,
        leaseMs: w.leaseMs,
        waitedMs: ages[i]?.waitedMs ?? 0,
        waitedAtLeast: ages[i]?.atLeast ?? true,
        blockedBy,
      })),
      mayRevoke,
    };
  },
  change(e: LockEvent): ChangeView {
    const { owner, sessionId, token } = e.holder;
    return {
      version: String(e.version),
      change: e.change,
      owner,
      sessionId,
      token: String(token),
      holdersLeft: e.holdersLeft,
    };
  },
  summary(s: LockSummary): { name: string; mode: string; limit: number; holders: number; waiters: number } {
    return { name: s.name, mode: s.mode ?? "free", limit: s.limit ?? 0, holders: s.holders, waiters: s.waiters };
  },
};

/**
 * Whom the lock's waiters wait behind: its holders, every one of them (a FIFO queue waits for the
 * head, and the head for the holders). The one place to refine when the store says more.
 */
function blockersOf(state: LockState): BlockerView[] {
  return state.holders.map((h) => ({ sessionId: h.sessionId, owner: h.owner, token: String(h.token) }));
}

function holderView(h: HolderState): HolderView {
  const text = Buffer.from(h.value).toString("utf8");
  const value = text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
  return {
    sessionId: h.sessionId,
    owner: h.owner,
    token: String(h.token),
    count: h.count,
    mode: h.mode,
    leaseMs: h.leaseMs,
    value,
  };
}
