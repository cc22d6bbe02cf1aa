import { keySlot } from "../../../server/store/redis/records/key-slot.js";
import { lockKeys } from "../../../server/store/redis/records/lock-keys.js";
import type { AcquireSetArgs, SetMember } from "../../../server/store/store.js";
import { LONG_TTL } from "./claims.js";

/** The Cluster slot of lock `name` (its keys' hash tag is the escaped name, whatever the prefix). */
export function slotOf(name: string): number {
  return keySlot(lockKeys("p", name)[0]);
}

/**
 * `count` lock names, starting with `first`, that hash to one Cluster slot (found by trying `first-1`,
 * `first-2`, …), so that an acquire-set of them runs on Redis Cluster too.
 */
export function sameSlotNames(first: string, count: number): string[] {
  const names = [first];
  for (let i = 1; names.length < count; i++) if (slotOf(`${first}-${i}`) === slotOf(first)) names.push(`${first}-${i}`);
  return names;
}

/**
 * An acquire-set of `names` (exclusive unless given as SetMembers) by `sessionId` as owner "o" with
 * request "set", may wait, leased for LONG_TTL; `more` overrides any of it.
 */
export function askSet(
  names: (string | SetMember)[],
  sessionId: string,
  more: Partial<AcquireSetArgs> = {},
): AcquireSetArgs {
  const locks = names.map((n) => (typeof n === "string" ? { name: n, mode: "exclusive" as const, limit: 0 } : n));
  return { sessionId, owner: "o", requestId: "set", ttlMs: LONG_TTL, mayWait: true, locks, ...more };
}
