import type { Logger } from "pino";
import type { Store } from "../../store/store.js";
import type { HeldWait } from "../../store/wait-registry.js";
import type { Pending, PendingSet, Session } from "../sessions/session.js";
import { DETECT_INTERVAL_MS, DeadlockDetector } from "./deadlock-detector.js";
import type { Deadlock } from "./wait-for-graph.js";

/** How long a registry entry lives unless its coordinator puts it again (every third of it). */
export const HELD_WAIT_TTL_MS = 6_000;

/** A queued request that can hold and wait: an acquire, or an AcquireAll set (one wait per name, all AND-edges). */
export type Waiting = Pending | PendingSet;

/**
 * This coordinator's hold-and-wait acquires: queued acquires whose (session, owner) holds another lock.
 * Each is put in the store's wait registry while it waits and removed when it ends; while there are
 * any, a DeadlockDetector looks for cycles every DETECT_INTERVAL_MS. With none: no store call, no timer.
 */
export class HeldWaits {
  private readonly entries = new Map<Waiting, HeldWait[]>();
  private readonly detector: DeadlockDetector;
  private timer?: NodeJS.Timeout;
  private looking = false;
  private stopped = false;
  private refreshAtMs = 0;

  constructor(
    private readonly store: Pick<Store, "describe" | "waits" | "coordinatorId">,
    private readonly log: Logger,
    fail: (p: Pending, d: Deadlock) => void,
    failSet: (s: PendingSet, d: Deadlock) => void = () => {},
  ) {
    this.detector = new DeadlockDetector(store, log, (w) => {
      const p = [...this.entries.keys()].find((q) => q.session.id === w.sessionId && q.requestId === w.requestId);
      if (!p || p.done) return undefined;
      return "locks" in p ? (d) => failSet(p, d) : (d) => fail(p, d);
    });
  }

  /** Hold-and-wait acquires registered here now. */
  get size(): number {
    return this.entries.size;
  }

  /** `p` was answered Queued: registered if its (session, owner) holds a lock. */
  queued(p: Waiting): void {
    if (holdsAny(p.session, p.owner)) this.register([p]);
  }

  /** (session, owner) was granted a lock: its queued acquires now hold and wait. */
  granted(session: Session, owner: string): void {
    if (session.pending.size === 0 && session.pendingSets.size === 0) return;
    const waiting = [...session.pending.values(), ...session.pendingSets.values()];
    const now = waiting.filter((p) => p.owner === owner && p.queued && !this.entries.has(p));
    if (now.length > 0) this.register(now);
  }

  /** `p` was answered (or dropped): its entry, if it had one, is removed. */
  ended(p: Waiting): void {
    if (this.entries.size === 0) return;
    const w = this.entries.get(p);
    if (!w) return;
    this.entries.delete(p);
    this.store.waits.remove(w).catch((err) => this.log.debug({ err }, "wait registry removal failed; it expires"));
    if (this.entries.size === 0) this.pause();
  }

  /** Stops looking for cycles for good (coordinator shutdown); the entries expire by themselves. */
  stop(): void {
    this.stopped = true;
    this.pause();
  }

  private pause(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || this.looking || this.stopped || this.entries.size === 0) return;
    this.timer = setTimeout(() => void this.tick(), DETECT_INTERVAL_MS);
  }

  private register(pending: Waiting[]): void {
    const waits = pending.flatMap((p) => {
      const w = ("locks" in p ? p.locks : [p]).map(({ name, mode }) => ({
        sessionId: p.session.id,
        owner: p.owner,
        requestId: p.requestId,
        name,
        mode,
        clientName: p.session.clientName,
        coordinatorId: this.store.coordinatorId,
        // When the acquire arrived, on the wall clock to the µs (acquires arrive well under 1 ms apart):
        // every coordinator compares the same recorded numbers.
        queuedAtMs: performance.timeOrigin + p.receivedAtMs,
      }));
      this.entries.set(p, w);
      return w;
    });
    this.put(waits);
    if (!this.timer && !this.looking) this.refreshAtMs = Date.now() + HELD_WAIT_TTL_MS / 3;
    this.schedule();
  }

  private put(waits: HeldWait[]): void {
    this.store.waits
      .put(waits, Date.now() + HELD_WAIT_TTL_MS)
      .catch((err) => this.log.debug({ err }, "wait registry write failed; retried on the next refresh"));
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    this.looking = true;
    try {
      if (Date.now() >= this.refreshAtMs) {
        this.refreshAtMs = Date.now() + HELD_WAIT_TTL_MS / 3;
        this.put([...this.entries.values()].flat());
      }
      await this.detector.look();
    } finally {
      this.looking = false;
    }
    this.schedule();
  }
}

/** True when (session, owner) holds at least one lock. */
function holdsAny(session: Session, owner: string): boolean {
  if (session.held.size === 0) return false;
  for (const h of session.held.values()) if (h.owner === owner) return true;
  return false;
}
