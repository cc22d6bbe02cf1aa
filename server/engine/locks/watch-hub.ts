import type { Logger } from "pino";
import type { LockEvent, LockState, Store } from "../../store/store.js";
import { nameSessions } from "../sessions/session-names.js";
import { RecheckScheduler } from "../waits/recheck-scheduler.js";

/** What the hub needs from one Watch stream. */
export interface WatchSink {
  snapshot(state: LockState, resync: boolean): void;
  event(event: LockEvent): void;
  /** True while the stream's outbound buffer is over its bound: it gets nothing until `caughtUp`. */
  readonly lagging: boolean;
  /** The watch cannot go on (store unreachable, coordinator draining): end the stream. */
  fail(reason: "unavailable" | "draining"): void;
}

/** One watcher of one lock, as the hub tracks it. */
export interface Watcher {
  readonly name: string;
  readonly sink: WatchSink;
  /** Version of the last change sent; 0n after a snapshot without one (any next change follows). */
  version: bigint;
  /** Changes held back while a snapshot is being read; undefined when none is. */
  pending?: LockEvent[];
  lagging: boolean;
  gone: boolean;
}

interface Topic {
  name: string;
  watchers: Set<Watcher>;
  subscribed: Promise<void>;
  /** A describe that has not been sent yet: watchers that need a snapshot meanwhile share it. */
  nextDescribe?: Promise<LockState>;
}

/**
 * Fans one lock's holder changes out to every watcher on this coordinator: one store subscription
 * per watched name (not per watcher), a snapshot for each new watcher read after subscribing, and
 * changes passed on in version order. A watcher that sees a version gap, or whose stream fell
 * behind, gets a fresh snapshot instead; so does every watcher after the store's event connection
 * came back. While a lock is watched the hub also re-checks it when its earliest holder lease
 * ends, so a crashed holder's expiry is published even when nobody waits for the lock.
 */
export class WatchHub {
  private readonly topics = new Map<string, Topic>();
  private readonly expiries = new RecheckScheduler((name) => void this.checkExpiry(name));
  private count = 0;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /** Watchers on this coordinator. */
  get size(): number {
    return this.count;
  }

  /** Starts watching `name` for `sink`: subscribes if nobody here watches it yet, then sends a snapshot. */
  add(name: string, sink: WatchSink): Watcher {
    let topic = this.topics.get(name);
    if (!topic) {
      topic = { name, watchers: new Set(), subscribed: this.store.watch(name) };
      topic.subscribed.catch(() => {});
      this.topics.set(name, topic);
    }
    const watcher: Watcher = { name, sink, version: 0n, lagging: false, gone: false };
    topic.watchers.add(watcher);
    this.count++;
    this.resync(topic, watcher, false);
    return watcher;
  }

  /** Stops a watcher; the last one of a name ends the subscription. Idempotent. */
  remove(watcher: Watcher): void {
    if (watcher.gone) return;
    watcher.gone = true;
    this.count--;
    const topic = this.topics.get(watcher.name);
    if (!topic?.watchers.delete(watcher) || topic.watchers.size > 0) return;
    this.topics.delete(watcher.name);
    this.store.unwatch(watcher.name).catch((err) => this.log.debug({ err, name: watcher.name }, "unwatch failed"));
  }

  /** A holder change from the store, passed to the lock's watchers. */
  event(e: LockEvent): void {
    const topic = this.topics.get(e.name);
    if (!topic) return;
    if (e.holder.leaseMs > 0) this.expiries.schedule(e.name, e.holder.leaseMs);
    for (const watcher of topic.watchers) this.deliver(topic, watcher, e);
  }

  /** A lagging watcher's stream drained: it gets a fresh snapshot. */
  caughtUp(watcher: Watcher): void {
    const topic = this.topics.get(watcher.name);
    if (!topic || watcher.gone || !watcher.lagging) return;
    watcher.lagging = false;
    this.resync(topic, watcher, true);
  }

  /** Changes may have been missed (the store's event connection dropped): every watcher resyncs. */
  resyncAll(): void {
    for (const topic of this.topics.values()) {
      for (const watcher of topic.watchers) if (!watcher.lagging) this.resync(topic, watcher, true);
    }
  }

  /** Ends every watch (coordinator drain) and stops the expiry timers. */
  stop(): void {
    this.expiries.clear();
    for (const topic of [...this.topics.values()]) {
      for (const watcher of [...topic.watchers]) {
        this.remove(watcher);
        watcher.sink.fail("draining");
      }
    }
  }

  private deliver(topic: Topic, w: Watcher, e: LockEvent): void {
    if (w.gone || w.lagging) return;
    if (w.pending) {
      w.pending.push(e);
      return;
    }
    if (w.version !== 0n && e.version <= w.version) return; // published before the snapshot was read
    if (w.version !== 0n && e.version !== w.version + 1n) {
      this.resync(topic, w, true);
      return;
    }
    w.version = e.version;
    w.sink.event(e);
    if (w.sink.lagging) w.lagging = true;
  }

  /** Sends `w` a snapshot read after now, then the changes that arrived meanwhile, in order. */
  private resync(topic: Topic, w: Watcher, isResync: boolean): void {
    if (w.pending) return; // a snapshot is already on its way
    w.pending = [];
    this.snapshot(topic)
      .then((state) => {
        if (w.gone) return;
        w.sink.snapshot(state, isResync);
        w.version = state.version;
        const pending = w.pending ?? [];
        w.pending = undefined;
        if (w.sink.lagging) w.lagging = true;
        for (const e of pending) this.deliver(topic, w, e);
      })
      .catch((err) => {
        if (w.gone) return;
        this.log.warn({ err, name: w.name }, "watch snapshot failed; ending the watch");
        this.remove(w);
        w.sink.fail("unavailable");
      });
  }

  /**
   * A snapshot read after the subscription is in place and after every caller so far started
   * holding changes back: describes are batched per lock and sent on the next turn of the loop.
   */
  private snapshot(topic: Topic): Promise<LockState> {
    topic.nextDescribe ??= topic.subscribed
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => {
        topic.nextDescribe = undefined;
        return this.store.describe(topic.name);
      })
      .then((state) => nameSessions(this.store, state))
      .then((state) => {
        const soonest = Math.min(...state.holders.map((h) => h.leaseMs));
        if (Number.isFinite(soonest) && this.topics.has(topic.name)) this.expiries.schedule(topic.name, soonest);
        return state;
      });
    return topic.nextDescribe;
  }

  // The expiry of a holder that crashed is only published when some operation purges it: do so
  // at its deadline while the lock is watched (check also hands the lock on, as any re-check does).
  private async checkExpiry(name: string): Promise<void> {
    if (!this.topics.has(name)) return;
    try {
      const { recheckInMs } = await this.store.check(name, []);
      if (recheckInMs >= 0 && this.topics.has(name)) this.expiries.schedule(name, recheckInMs);
    } catch (err) {
      this.log.warn({ err, name }, "watched lock re-check failed; retrying in 1 s");
      if (this.topics.has(name)) this.expiries.schedule(name, 1000);
    }
  }
}
