import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Watcher, WatchHub, WatchSink } from "../engine/locks/watch-hub.js";
import { nameSessions } from "../engine/sessions/session-names.js";
import type { LockEvent, LockState, Store } from "../store/store.js";
import type { ConsoleAccess } from "./access/console-access.js";
import type { ConsoleLimits, ConsoleStats } from "./console-limits.js";
import { LockViews } from "./lock-view.js";
import { readableLocks } from "./readable-locks.js";

/** Shortest time between two reads of the open lock prompted by its holder changes, in ms. */
export const LOCK_READ_GAP_MS = 100;

/** What every console stream of one coordinator shares. */
export interface FeedDeps {
  store: Store;
  watches: WatchHub;
  access: ConsoleAccess;
  limits: ConsoleLimits;
  stats: ConsoleStats;
  log: Logger;
}

/** What one stream shows: the readable locks under `prefix`, and the lock `name` if one is open. */
export interface FeedQuery {
  identity: string;
  /** The request's headers, to identify the caller again on every refresh (tokens and policies change). */
  headers: IncomingHttpHeaders;
  prefix: string;
  name?: string;
}

/**
 * One browser's live view, as a server-sent event stream: `list` (the readable locks under the
 * prefix, re-read every `refreshMs`, sent when it changed), `lock` (the open lock's holders and
 * queue: on every Watch snapshot, after holder changes at most every LOCK_READ_GAP_MS, and every
 * `refreshMs` since queue changes are not Watch events) and `change` (each holder change). At most `maxBufferBytes` wait in the response
 * for a slow reader: past that nothing more is queued, and once it drained the reader gets a
 * fresh list and lock instead of what it missed.
 */
export class ConsoleFeed implements WatchSink {
  private watcher?: Watcher;
  private timer?: NodeJS.Timeout;
  private lastList = "";
  private refreshing = false;
  private again = false;
  private behind = false;
  private closed = false;
  private lockTimer?: NodeJS.Timeout;
  private lastLockRead = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly res: ServerResponse,
    private readonly deps: FeedDeps,
    private readonly query: FeedQuery,
  ) {}

  /** Starts the stream: headers, the first list and lock, and the Watch of the open lock. */
  start(headers: Record<string, string>): void {
    this.deps.stats.clients++;
    this.res.on("close", () => this.close());
    this.res.writeHead(200, { ...headers, "content-type": "text/event-stream; charset=utf-8" });
    this.res.write(": turnstile console\n\n");
    this.timer = setInterval(() => void this.refresh(), this.deps.limits.refreshMs);
    void this.refresh();
    if (this.query.name !== undefined) this.watcher = this.deps.watches.add(this.query.name, this);
  }

  get lagging(): boolean {
    return this.behind;
  }

  snapshot(state: LockState): void {
    this.sendLock(state);
  }

  event(event: LockEvent): void {
    this.send("change", LockViews.change(event));
    this.readLockSoon();
  }

  fail(reason: "unavailable" | "draining" | "forbidden"): void {
    this.send("end", { reason });
    this.res.end();
    this.close();
  }

  /** Re-reads the list and the open lock; a call while one runs makes it run once more after. */
  private async refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return;
    }
    this.refreshing = true;
    const { store, access, limits } = this.deps;
    const { identity, prefix, name, headers } = this.query;
    try {
      do {
        this.again = false;
        // The caller's token or rights may have been withdrawn since the stream opened.
        const allowed =
          access.identify(headers) === identity && (name === undefined || access.may(identity, "read", name));
        if (!allowed) return this.fail("forbidden");
        const list = JSON.stringify(await readableLocks(store, access, identity, prefix, limits.maxListed));
        if (list !== this.lastList && this.sendRaw("list", list)) this.lastList = list;
        if (name !== undefined && !this.closed) this.sendLock(await nameSessions(store, await store.describe(name)));
      } while (this.again && !this.closed && !this.behind);
    } catch (err) {
      this.deps.log.debug({ err }, "console refresh failed");
      this.send("problem", { message: "store unavailable: retrying" });
    } finally {
      this.refreshing = false;
    }
  }

  /**
   * Re-reads the open lock after a holder change, at most once per LOCK_READ_GAP_MS however hot the
   * lock is (the changes themselves are sent at once).
   */
  private readLockSoon(): void {
    const { name } = this.query;
    if (this.lockTimer || name === undefined) return;
    const delay = Math.max(0, this.lastLockRead + LOCK_READ_GAP_MS - performance.now());
    this.lockTimer = setTimeout(() => {
      this.lastLockRead = performance.now();
      const { store } = this.deps;
      store
        .describe(name)
        .then((state) => nameSessions(store, state))
        .then(
          (state) => {
            this.lockTimer = undefined;
            if (!this.closed) this.sendLock(state);
          },
          (err) => {
            this.lockTimer = undefined;
            this.deps.log.debug({ err }, "console lock read failed");
          },
        );
    }, delay);
  }

  private sendLock(state: LockState): void {
    const mayRevoke = this.deps.access.may(this.query.identity, "admin", state.name);
    this.send("lock", LockViews.lock(state, mayRevoke));
  }

  private send(event: string, data: unknown): boolean {
    return this.sendRaw(event, JSON.stringify(data));
  }

  // JSON has no raw line breaks, so each message is one `data:` line.
  private sendRaw(event: string, json: string): boolean {
    if (this.closed || this.behind) return false;
    if (this.res.writableLength >= this.deps.limits.maxBufferBytes) {
      this.fallBehind();
      return false;
    }
    this.res.write(`event: ${event}\ndata: ${json}\n\n`);
    this.deps.stats.peakBufferedBytes = Math.max(this.deps.stats.peakBufferedBytes, this.res.writableLength);
    return true;
  }

  private fallBehind(): void {
    this.behind = true;
    this.deps.stats.overflows++;
    this.res.once("drain", () => {
      if (this.closed) return;
      this.behind = false;
      this.lastList = "";
      if (this.watcher) this.deps.watches.caughtUp(this.watcher);
      void this.refresh();
    });
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.deps.stats.clients--;
    clearInterval(this.timer);
    clearTimeout(this.lockTimer);
    if (this.watcher) this.deps.watches.remove(this.watcher);
  }
}
