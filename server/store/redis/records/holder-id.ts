import type { StoreMode } from "../../store.js";

// 3 and 4: an acquire-set member's queue entry (docs/data-model.md).
const MODES: Record<string, StoreMode> = { "1": "exclusive", "2": "shared", "3": "exclusive", "4": "shared" };

/** The mode a record's mode digit stands for: 1 or 3 exclusive, 2 or 4 shared (3, 4: an acquire-set member). */
export function modeOf(digit: string): StoreMode {
  return MODES[digit];
}

/**
 * Splits a holder id "session:owner" (or a waiter id "session:request", the request as `owner`). Session
 * ids are hex, so the first colon ends the session part.
 */
export function splitId(id: string): { sessionId: string; owner: string } {
  const colon = id.indexOf(":");
  return { sessionId: id.slice(0, colon), owner: id.slice(colon + 1) };
}
