/** Where a KeepAliveTimer notes send times: the session's LeaseClock. */
export interface KeepAliveClock {
  keepAliveSent(seq: bigint): number;
}

/**
 * Sends a keepalive every ttl/3 with increasing seqs, noting each send time on the lease clock
 * just before the write (so the lease is measured from no later than the real send). Runs until
 * `stop()`; it never keeps the process alive by itself.
 */
export class KeepAliveTimer {
  readonly #clock: KeepAliveClock;
  readonly #send: (seq: bigint) => void;
  #seq = 0n;
  #timer: NodeJS.Timeout | undefined;

  constructor(clock: KeepAliveClock, send: (seq: bigint) => void) {
    this.#clock = clock;
    this.#send = send;
  }

  /** (Re)starts the timer for a session TTL of `ttlMs`; seqs keep counting up across restarts. */
  start(ttlMs: number): void {
    this.stop();
    this.#timer = setInterval(() => this.#tick(), ttlMs / 3);
    // The session stream, not this timer, keeps the process alive while the session is open.
    this.#timer.unref();
  }

  /** Stops sending keepalives. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    this.#seq += 1n;
    this.#clock.keepAliveSent(this.#seq);
    this.#send(this.#seq);
  }
}
