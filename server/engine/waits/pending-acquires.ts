import { type Pending, waiterKey } from "../sessions/session.js";

/**
 * The acquires of this coordinator's sessions not answered yet, found by session and request id (a
 * grant names them so) and by lock name (a re-check asks the store about all of a name's waiters).
 * Each is in its session's `pending` map too: added and forgotten there together.
 */
export class PendingAcquires {
  /** By session and request id (waiterKey). */
  readonly byId = new Map<string, Pending>();
  private readonly byName = new Map<string, Set<Pending>>();

  /** `finished` hears of every acquire as it is answered or dropped. */
  constructor(private readonly finished: (p: Pending) => void = () => {}) {}

  /** The pending acquire with this session and request id, if it is not answered yet. */
  get(sessionId: string, requestId: string): Pending | undefined {
    return this.byId.get(waiterKey(sessionId, requestId));
  }

  /** The acquires waiting for `name`, in arrival order: a copy, since answering them changes the set. */
  waitingFor(name: string): Pending[] {
    return [...(this.byName.get(name) ?? [])];
  }

  /**
   * The queued acquire of this coordinator likely granted `name` next when its exclusive hold is let
   * go: the first of the highest priority among those answered Queued, if it asks for an exclusive
   * hold; undefined otherwise. A waiter of another coordinator may be ahead of it: only a hint.
   */
  likelyNext(name: string): Pending | undefined {
    let next: Pending | undefined;
    for (const p of this.byName.get(name) ?? []) {
      if (p.queued && !p.done && (!next || p.priority > next.priority)) next = p;
    }
    return next?.mode === "exclusive" ? next : undefined;
  }

  /** True while an acquire waits for `name`. */
  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The names acquires wait for. */
  names(): MapIterator<string> {
    return this.byName.keys();
  }

  /** Registers a new acquire, in its session's `pending` map too. */
  add(p: Pending): void {
    p.session.pending.set(p.requestId, p);
    this.byId.set(waiterKey(p.session.id, p.requestId), p);
    const set = this.byName.get(p.name) ?? this.byName.set(p.name, new Set()).get(p.name)!;
    set.add(p);
  }

  /** Marks the request answered and forgets it everywhere. */
  finish(p: Pending): void {
    p.done = true;
    clearTimeout(p.waitTimer);
    p.session.pending.delete(p.requestId);
    this.byId.delete(waiterKey(p.session.id, p.requestId));
    const set = this.byName.get(p.name);
    set?.delete(p);
    if (set?.size === 0) this.byName.delete(p.name);
    this.finished(p);
  }
}
