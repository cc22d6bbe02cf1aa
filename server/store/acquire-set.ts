import { REQUEST_LIMITS } from "../../wire/request-limits.js";

/** One lock of an acquire-set claim (docs/multi-lock.md). */
export interface SetMember {
  name: string;
  /** As StoreMode (not imported: store.ts imports this file). */
  mode: "exclusive" | "shared";
  limit: number;
  /** The lock-delay its hold gets (as AcquireArgs.lockDelayMs); absent or 0: none. */
  lockDelayMs?: number;
}

/** Acquire-set arguments: one claim of 1..MAX_SET_NAMES distinct names, granted all together or not at all. */
export interface AcquireSetArgs {
  sessionId: string;
  owner: string;
  requestId: string;
  ttlMs: number;
  /** False: try once (answer `busy` instead of queueing). */
  mayWait: boolean;
  /** Kept for every hold the set becomes; default empty. */
  value?: Uint8Array;
  locks: SetMember[];
}

/**
 * Answer to an acquire-set: `granted` with one token per lock (request order); `queued` on every
 * lock, naming the first (`index`) it waits for; `busy` (try once); `conflict` (a SHARED limit in
 * force differs); `held` (the owner already holds lock `index`: a set takes only names not held);
 * `cross-slot` (Redis Cluster: two of its names hash to different slots; nothing was run).
 */
export type AcquireSetOutcome =
  | { kind: "granted"; tokens: bigint[] }
  | { kind: "queued"; index: number; position: number; recheckInMs: number }
  | { kind: "busy"; index: number }
  | { kind: "conflict"; index: number; limitInForce: number }
  | { kind: "held"; index: number }
  | { kind: "cross-slot"; indexes: [number, number]; slots: [number, number] };

/** The most names one acquire-set may claim (acquire-set.lua takes 6 keys per name). */
export const MAX_SET_NAMES = REQUEST_LIMITS.maxSetNames;
