import { queueBlockers } from "../engine/waits/wait-blockers.js";
import type { HolderState, LockEvent, LockState, LockSummary } from "../store/store.js";

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
  /** The holding session's client name ("" when unknown). */
  clientName: string;
  /** The identity that opened the holding session ("" when security is off). */
  identity: string;
  /** How long it has held the lock on the store's clock; undefined when the read did not say (Watch snapshots). */
  heldForMs: number | undefined;
  /** The latest request to let go made to it (docs/elections.md); absent when none is pending. */
  releaseRequest?: { requester: string; reason: string };
}

/**
 * A holder a waiter waits behind: the proto `Blocker` (Describe's and Watch's `blocked_by`) as JSON,
 * with the same field names; `heldForMs` is its `held_for`.
 */
export interface BlockerView {
  sessionId: string;
  owner: string;
  clientName: string;
  identity: string;
  heldForMs: number | undefined;
  fencingToken: string;
  mode: string;
}

/** One waiter as the page shows it. */
export interface WaiterView {
  sessionId: string;
  owner: string;
  requestId: string;
  position: number;
  mode: string;
  leaseMs: number;
  /** How long it has waited since it first queued, on the store's clock (Describe's `waited`). */
  waitedMs: number;
  clientName: string;
  /** Its queue priority (0: none; docs/elections.md). */
  priority: number;
  /** The holders it waits behind. */
  blockedBy: BlockerView[];
  /** For a member of a waiting AcquireAll set: every name of the set, this one included. */
  setNames?: string[];
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
  /** Ms until the lock-delay in force ends (the page shows "delayed until"); absent when not delayed. */
  delayMs?: number;
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
  /** `state` as Describe reads it, client names filled in (nameSessions). */
  lock(state: LockState, mayRevoke: boolean): LockView {
    const blockedBy = queueBlockers(state).map(blockerView);
    return {
      name: state.name,
      version: String(state.version),
      mode: state.holders[0]?.mode ?? "free",
      limit: state.limit ?? 0,
      holders: state.holders.map(holderView),
      waiters: state.waiters.map((w) => ({
        sessionId: w.sessionId,
        owner: w.owner,
        requestId: w.requestId,
        position: w.position,
        mode: w.mode,
        leaseMs: w.leaseMs,
        waitedMs: w.waitedMs,
        clientName: w.clientName ?? "",
        priority: w.priority,
        blockedBy,
        ...(w.setNames && { setNames: w.setNames }),
      })),
      mayRevoke,
      ...(state.delayMs !== undefined && { delayMs: state.delayMs }),
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
  summary(s: LockSummary): {
    name: string;
    mode: string;
    limit: number;
    holders: number;
    waiters: number;
    delayMs?: number;
  } {
    const { name, holders, waiters, delayMs } = s;
    return { name, mode: s.mode ?? "free", limit: s.limit ?? 0, holders, waiters, ...(delayMs && { delayMs }) };
  },
};

function blockerView(h: HolderState): BlockerView {
  return {
    sessionId: h.sessionId,
    owner: h.owner,
    clientName: h.clientName ?? "",
    identity: h.identity ?? "",
    heldForMs: h.heldMs,
    fencingToken: String(h.token),
    mode: h.mode,
  };
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
    clientName: h.clientName ?? "",
    identity: h.identity ?? "",
    heldForMs: h.heldMs,
    ...(h.releaseRequest && { releaseRequest: h.releaseRequest }),
  };
}
