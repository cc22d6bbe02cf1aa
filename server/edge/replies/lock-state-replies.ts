import {
  type Blocker,
  type DescribeResponse,
  type Holder,
  HolderChange,
  LockMode,
  type LockSummary as ProtoLockSummary,
  type WatchResponse,
} from "../../../gen/ts/turnstile/v1/turnstile.js";
import { durationFromMs } from "../../../wire/duration.js";
import { queueBlockers } from "../../engine/waits/wait-blockers.js";
import type { HolderState, LockEvent, LockState, LockSummary, StoreMode, WaiterState } from "../../store/store.js";

const CHANGES: Record<LockEvent["change"], HolderChange> = {
  acquired: HolderChange.HOLDER_CHANGE_ACQUIRED,
  released: HolderChange.HOLDER_CHANGE_RELEASED,
  expired: HolderChange.HOLDER_CHANGE_EXPIRED,
  revoked: HolderChange.HOLDER_CHANGE_REVOKED,
  value: HolderChange.HOLDER_CHANGE_VALUE,
  transferred: HolderChange.HOLDER_CHANGE_TRANSFERRED,
};

/** Builders of the Describe, Watch and List messages from the store's view of a lock. */
export const LockStateReplies = {
  describe(state: LockState): DescribeResponse {
    return {
      name: state.name,
      mode: modeOf(state.holders[0]?.mode),
      limit: state.limit ?? 0,
      holders: state.holders.map((h) => holderOf(h, state.name)),
      waiters: waitersOf(state),
      version: state.version,
      ...(state.delayMs !== undefined && { delayRemaining: durationFromMs(state.delayMs) }),
    };
  },
  /** A Watch snapshot; `resync` when it replaces changes the watcher missed. */
  snapshot(state: LockState, resync: boolean): WatchResponse {
    const snapshot = {
      name: state.name,
      version: state.version,
      mode: modeOf(state.holders[0]?.mode),
      limit: state.limit ?? 0,
      holders: state.holders.map((h) => holderOf(h, state.name)),
      waiterCount: state.waiters.length,
      resync,
      noHolder: state.holders.length === 0,
      waiters: waitersOf(state),
    };
    return { kind: { $case: "snapshot", snapshot } };
  },
  event(e: LockEvent): WatchResponse {
    const event = {
      name: e.name,
      version: e.version,
      change: CHANGES[e.change],
      holder: holderOf(e.holder, e.name),
      holdersLeft: e.holdersLeft,
      noHolder: e.holdersLeft === 0,
      from: e.from && holderOf(e.from, e.name),
    };
    return { kind: { $case: "event", event } };
  },
  summary(s: LockSummary): ProtoLockSummary {
    return { name: s.name, mode: modeOf(s.mode), limit: s.limit ?? 0, holderCount: s.holders, waiterCount: s.waiters };
  },
};

/** The waiters of `state` in queue order, each with the holders it waits behind. */
function waitersOf(state: LockState): ReturnType<typeof LockStateReplies.describe>["waiters"] {
  const blockedBy = queueBlockers(state).map(blockerOf);
  return state.waiters.map((w: WaiterState) => ({
    sessionId: w.sessionId,
    owner: w.owner,
    requestId: w.requestId,
    position: w.position,
    mode: modeOf(w.mode),
    leaseRemaining: durationOf(w.leaseMs),
    waited: durationOf(w.waitedMs),
    clientName: w.clientName ?? "",
    blockedBy,
    setNames: w.setNames ?? [],
    priority: w.priority,
  }));
}

/** A holder as a Blocker: whom a waiter waits behind, and for how long it has held the lock. */
export function blockerOf(h: HolderState): Blocker {
  return {
    sessionId: h.sessionId,
    owner: h.owner,
    clientName: h.clientName ?? "",
    identity: h.identity ?? "",
    heldFor: h.heldMs === undefined ? undefined : durationOf(h.heldMs),
    fencingToken: h.token,
    mode: modeOf(h.mode),
    name: "",
  };
}

/** A holder as the wire shows it; `name` is its lock's (a release request names it). */
function holderOf(h: HolderState, name: string): Holder {
  return {
    sessionId: h.sessionId,
    owner: h.owner,
    value: Buffer.from(h.value.buffer, h.value.byteOffset, h.value.byteLength),
    fencingToken: h.token,
    holdCount: h.count,
    mode: modeOf(h.mode),
    leaseRemaining: durationOf(h.leaseMs),
    heldFor: h.heldMs === undefined ? undefined : durationOf(h.heldMs),
    clientName: h.clientName ?? "",
    identity: h.identity ?? "",
    releaseRequest: h.releaseRequest && { name, owner: h.owner, ...h.releaseRequest },
  };
}

function modeOf(mode: StoreMode | undefined): LockMode {
  if (mode === undefined) return LockMode.LOCK_MODE_UNSPECIFIED;
  return mode === "exclusive" ? LockMode.LOCK_MODE_EXCLUSIVE : LockMode.LOCK_MODE_SHARED;
}

// A store reading taken just past a deadline can come out negative: shown as zero, never as a negative Duration.
function durationOf(ms: number) {
  return durationFromMs(Math.max(0, ms));
}
