import type { KeepAliveAck } from "../../gen/ts/turnstile/v1/turnstile.js";
import { msFromDuration } from "../../wire/duration.js";
import { MAX_TIMER_MS } from "../../wire/max-timer-ms.js";

/** What a KeepAlive works on: the session's LeaseClock. */
export interface KeepAliveClock {
  readonly ttlMs: number;
  setTtl(ttlMs: number): void;
  keepAliveSent(seq: bigint): number;
  keepAliveAcked(seq: bigint): boolean;
}

/**
 * Keeps a session's lease: sends a keepalive every ttl/3 with increasing seqs, noting each send
 * time on the lease clock just before the write (so the lease is measured from no later than the
 * real send), confirms the lease on each ack and adopts the TTL the server grants. `leaseMoved` is
 * called whenever lease deadlines may have moved (the held locks re-arm their timer). Runs until
 * `stop()`; it never keeps the process alive by itself.
 */
export class KeepAlive {
  readonly #clock: KeepAliveClock;
  readonly #send: (seq: bigint) => void;
  readonly #leaseMoved: () => void;
  #seq = 0n;
  #timer: NodeJS.Timeout | undefined;

  constructor(clock: KeepAliveClock, send: (seq: bigint) => void, leaseMoved: () => void) {
    this.#clock = clock;
    this.#send = send;
    this.#leaseMoved = leaseMoved;
  }

  /** Adopts a session TTL of `ttlMs` and (re)starts the timer; seqs keep counting up across restarts. */
  adoptTtl(ttlMs: number): void {
    this.#clock.setTtl(ttlMs);
    this.stop();
    // Capped: an interval past 2^31-1 ms would tick every ms; an early keepalive is harmless.
    this.#timer = setInterval(() => this.#tick(), Math.min(ttlMs / 3, MAX_TIMER_MS));
    // The session stream, not this timer, keeps the process alive while the session is open.
    this.#timer.unref();
    this.#leaseMoved();
  }

  /** Confirms the lease up to the ack's keepalive and adopts a TTL the server changed. */
  acked(ack: KeepAliveAck): void {
    this.#clock.keepAliveAcked(ack.seq);
    const ttlMs = ack.ttl === undefined ? 0 : msFromDuration(ack.ttl);
    if (ttlMs > 0 && ttlMs !== this.#clock.ttlMs) this.adoptTtl(ttlMs);
    else this.#leaseMoved();
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
