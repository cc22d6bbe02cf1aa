import type { Claim, SessionRecord, SetMember, StoreMode } from "../../store/store.js";
import { type SessionSink, SILENT_SINK } from "./session-sink.js";

/** One hold of (name, owner) by a session: its token and re-entry count. */
export interface Hold {
  name: string;
  owner: string;
  token: bigint;
  count: number;
  /** `performance.now()` when it was granted on this coordinator; absent for a resumed hold. */
  grantedAtMs?: number;
  /** Set for a shared hold granted on this coordinator (others may hold the lock beside it). */
  shared?: boolean;
  /** Set while a release of it is in flight: keepalives stop renewing it (released, or its lease ends). */
  releasing?: boolean;
}

/** An acquire that has not been answered with Acquired or Failed yet. */
export interface Pending {
  session: Session;
  requestId: string;
  name: string;
  owner: string;
  mode: StoreMode;
  limit: number;
  /** Its queue priority, 0–100 (higher first, FIFO within one). */
  priority: number;
  /** Set once the request is answered; every later event about it is ignored. */
  done: boolean;
  /** `performance.now()` when the acquire arrived. */
  receivedAtMs: number;
  /** Set once the acquire was answered Queued. */
  queued?: boolean;
  waitTimer?: NodeJS.Timeout;
}

/** An AcquireAll not answered yet (server/engine/sets/set-acquires.ts): queued on every name, holding none. */
export interface PendingSet {
  session: Session;
  requestId: string;
  owner: string;
  locks: SetMember[];
  value: Buffer;
  mayWait: boolean;
  done: boolean;
  receivedAtMs: number;
  queued?: boolean;
  waitTimer?: NodeJS.Timeout;
  /** Its wait (ms), when that ran out before the set was answered Queued: it ends once a run queues it (or soon after). */
  waitRanOut?: number;
  recheckTimer?: NodeJS.Timeout;
  /** A store run of the set is in flight; `again`: another was asked for meanwhile. */
  running?: boolean;
  again?: boolean;
}

/**
 * The coordinator's view of one session stream: its lease, holds and pending acquires. It tells its
 * client through the edge's sink, and nothing once the stream has ended.
 */
export class Session {
  readonly held = new Map<string, Hold>();
  readonly pending = new Map<string, Pending>();
  /** AcquireAll requests not answered yet, by request id. */
  readonly pendingSets = new Map<string, PendingSet>();
  /** Request ids of releases and proclaims in flight (acquires in flight are the pending map). */
  readonly releasing = new Set<string>();
  ended = false;
  /** Its record as stored (set at open and resume): written again if it expired while the session lived on. */
  record?: SessionRecord;
  /** (name, owner) holdKeys with a release or withdrawal whose store outcome is still unknown. */
  private readonly doubts = new Map<string, number>();

  constructor(
    readonly id: string,
    readonly clientName: string,
    readonly ttlMs: number,
    private readonly sink: SessionSink,
  ) {}

  /** Where to tell the client what happened: the edge's sink, or a silent one once the stream has ended. */
  get tell(): SessionSink {
    return this.ended ? SILENT_SINK : this.sink;
  }

  /** Locks held plus acquires pending: what the per-session limit counts. */
  get lockCount(): number {
    let sets = 0;
    for (const s of this.pendingSets.values()) sets += s.locks.length;
    return this.held.size + this.pending.size + sets;
  }

  /** Marks `key` as in doubt (a store outcome being resolved); returns the function that unmarks it. */
  markInDoubt(key: string): () => void {
    this.doubts.set(key, (this.doubts.get(key) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.doubts.get(key) ?? 1) - 1;
      if (left > 0) this.doubts.set(key, left);
      else this.doubts.delete(key);
    };
  }

  /** True while a release or withdrawal of (name, owner) has an unresolved store outcome. */
  inDoubt(key: string): boolean {
    return this.doubts.has(key);
  }

  /** True when the request id belongs to a request still in flight. */
  inFlight(requestId: string): boolean {
    return this.pending.has(requestId) || this.releasing.has(requestId) || this.pendingSets.has(requestId);
  }
}

/** The key of one hold in `Session.held`. */
export function holdKey(name: string, owner: string): string {
  // Names and owners contain no control characters, so NUL cannot be ambiguous.
  return `${name}\u0000${owner}`;
}

/** The key of a pending acquire among a coordinator's waiters. */
export function waiterKey(sessionId: string, requestId: string): string {
  return `${sessionId}:${requestId}`;
}

/** The store's view of a pending acquire. */
export function claimOf(p: Pending): Claim {
  return { name: p.name, sessionId: p.session.id, owner: p.owner, requestId: p.requestId };
}
