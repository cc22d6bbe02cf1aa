import type { SetMember, StoreMode } from "../store/store.js";

/** An Open the edge validated: the TTL is within the configured bounds. */
export interface ValidOpen {
  clientName: string;
  ttlMs: number;
}

/** A resume the edge read off an Open: the session, its secret and the holds the client claims. */
export interface ResumeRequest {
  resumeSessionId: string;
  resumeSecret: string;
  held: readonly { name: string; owner: string }[];
}

/** An Acquire the edge validated. `waitMs` undefined waits forever; 0 tries once. */
export interface ValidAcquire {
  requestId: string;
  name: string;
  owner: string;
  mode: StoreMode;
  limit: number;
  waitMs: number | undefined;
  value: Buffer;
  /** The hold's lock-delay (0..60 s); undefined: the serve default for the name's prefix. */
  lockDelayMs?: number;
  /** Queue rank (0..MAX_PRIORITY); 0 or absent: none. */
  priority?: number;
}

/** An AcquireAll the edge validated: 1..MAX_SET_NAMES distinct names; `waitMs` as ValidAcquire's. */
export interface ValidAcquireAll {
  requestId: string;
  locks: SetMember[];
  owner: string;
  waitMs: number | undefined;
  value: Buffer;
  /** Every hold's lock-delay (0..60 s); undefined: per name, the serve default for its prefix. */
  lockDelayMs?: number;
}

/** A Release the edge validated. */
export interface ValidRelease {
  requestId: string;
  name: string;
  owner: string;
}

/** A Proclaim the edge validated. */
export interface ValidProclaim {
  requestId: string;
  name: string;
  owner: string;
  value: Buffer;
}

/** A Transfer the edge validated: (name, owner) goes to (toSessionId, toOwner); "" picks the head / the first. */
export interface ValidTransfer {
  requestId: string;
  name: string;
  owner: string;
  toSessionId: string;
  toOwner: string;
}

/** A RequestRelease the edge validated: the reason is at most MAX_REASON_BYTES. */
export interface ValidRequestRelease {
  requestId: string;
  name: string;
  reason: string;
}
