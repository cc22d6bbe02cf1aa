/** Reads a monotonic clock in milliseconds (by default `performance.now()`). */
export type MonotonicClock = () => number;

/** How a LeaseClock is set up: the session TTL, an optional fixed safety margin, and the clock. */
export interface LeaseClockOptions {
  /** Session TTL granted by the server, in ms. */
  ttlMs: number;
  /** Subtracted from every deadline; default `Math.min(2000, ttlMs / 10)`, following TTL changes. */
  safetyMarginMs?: number;
  /** Injectable for tests; default `performance.now()`. */
  now?: MonotonicClock;
}

/**
 * The told-first lease arithmetic of one session, pure apart from reading `now`. A lease tracked
 * under key K ends at max(acquire sent, newest confirmed renewal of K sent, newest confirmed
 * keepalive sent) + ttl − margin, so the client always judges a lock lost before the server could
 * grant it to anyone else.
 */
export class LeaseClock<K> {
  /** The monotonic clock every timestamp is measured on. */
  readonly now: MonotonicClock;
  #ttlMs: number;
  readonly #fixedMarginMs: number | undefined;
  #lastConfirmedSendMs = Number.NEGATIVE_INFINITY;
  readonly #keepAliveSentAtMs = new Map<bigint, number>();
  readonly #acquireSentAtMs = new Map<K, number>();

  constructor(options: LeaseClockOptions) {
    this.now = options.now ?? (() => performance.now());
    this.#ttlMs = options.ttlMs;
    this.#fixedMarginMs = options.safetyMarginMs;
  }

  /** The session TTL in ms that deadlines are computed with. */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  /** The margin in ms subtracted from every deadline. */
  get safetyMarginMs(): number {
    return this.#fixedMarginMs ?? Math.min(2000, this.#ttlMs / 10);
  }

  /** Send time of the newest keepalive the server acknowledged; -Infinity before the first ack. */
  get lastConfirmedSendMs(): number {
    return this.#lastConfirmedSendMs;
  }

  /** Adopts a TTL the server granted (in `opened` or a keepalive ack). */
  setTtl(ttlMs: number): void {
    this.#ttlMs = ttlMs;
  }

  /** Records that keepalive `seq` is sent now and returns that time; call it just before the write. */
  keepAliveSent(seq: bigint): number {
    const sentAtMs = this.now();
    this.#keepAliveSentAtMs.set(seq, sentAtMs);
    return sentAtMs;
  }

  /**
   * Records the ack of keepalive `seq`: every lease is now good until that keepalive's send time
   * + ttl. Returns true when this moved the confirmation forward (unknown seqs are ignored).
   */
  keepAliveAcked(seq: bigint): boolean {
    const sentAtMs = this.#keepAliveSentAtMs.get(seq);
    if (sentAtMs === undefined) return false;
    // Acks come in order, so older keepalives still unanswered will never be needed.
    for (const pending of this.#keepAliveSentAtMs.keys()) {
      if (pending <= seq) this.#keepAliveSentAtMs.delete(pending);
    }
    if (sentAtMs <= this.#lastConfirmedSendMs) return false;
    this.#lastConfirmedSendMs = sentAtMs;
    return true;
  }

  /** Starts tracking the lease of `key`, granted for an acquire sent at `acquireSentAtMs`. */
  track(key: K, acquireSentAtMs: number): void {
    this.#acquireSentAtMs.set(key, acquireSentAtMs);
  }

  /**
   * Records that the lease of `key` alone was renewed by a request sent at `sentAtMs` (a resume's
   * `open` listing it): its deadline is then at least `sentAtMs` + ttl − margin. Untracked keys
   * are ignored; other keys keep their deadlines.
   */
  confirmFor(key: K, sentAtMs: number): void {
    const baseMs = this.#acquireSentAtMs.get(key);
    if (baseMs !== undefined && sentAtMs > baseMs) this.#acquireSentAtMs.set(key, sentAtMs);
  }

  /** Stops tracking the lease of `key` (released or lost). */
  untrack(key: K): void {
    this.#acquireSentAtMs.delete(key);
  }

  /** The deadline of a lease whose acquire was sent at `acquireSentAtMs`. */
  deadlineFor(acquireSentAtMs: number): number {
    const base = Math.max(acquireSentAtMs, this.#lastConfirmedSendMs);
    return base + this.#ttlMs - this.safetyMarginMs;
  }

  /** The deadline of the lease tracked under `key`, or undefined when it is not tracked. */
  deadlineOf(key: K): number | undefined {
    const sentAtMs = this.#acquireSentAtMs.get(key);
    return sentAtMs === undefined ? undefined : this.deadlineFor(sentAtMs);
  }

  /** The earliest deadline over all tracked leases, or undefined when none is tracked. */
  nextDeadlineMs(): number | undefined {
    let earliestSentMs = Number.POSITIVE_INFINITY;
    for (const sentAtMs of this.#acquireSentAtMs.values()) {
      earliestSentMs = Math.min(earliestSentMs, sentAtMs);
    }
    return earliestSentMs === Number.POSITIVE_INFINITY ? undefined : this.deadlineFor(earliestSentMs);
  }

  /** Removes and returns every tracked key whose deadline is at or before `nowMs`. */
  takeExpired(nowMs: number = this.now()): K[] {
    const expired: K[] = [];
    for (const [key, sentAtMs] of this.#acquireSentAtMs) {
      if (this.deadlineFor(sentAtMs) <= nowMs) expired.push(key);
    }
    for (const key of expired) this.#acquireSentAtMs.delete(key);
    return expired;
  }
}
