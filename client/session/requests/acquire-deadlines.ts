import type { MonotonicClock } from "../../locks/lease-clock.js";
import { TurnstileError } from "../../turnstile-error.js";
import type { PendingAcquire } from "./acquires-in-flight.js";

/** What a deadline needs of an acquire in flight (an Acquire's or an AcquireAll's). */
export type Deadlined = Pick<PendingAcquire, "requestId" | "giveUpAtMs" | "abandoned" | "fail"> & {
  readonly request: { readonly name: string; readonly waitMs?: number };
};

/**
 * How long after its wait an acquire still waits for the coordinator's answer, in ms. The
 * coordinator answers a finite wait itself when it runs out; past this grace its link is dead or its
 * store stalled, and the client gives up on its own (docs/protocol.md, *The client's own deadline*).
 */
export const ANSWER_GRACE_MS = 1000;

/** How often the deadlines are checked while an acquire with a finite wait is in flight, in ms. */
export const DEADLINE_SWEEP_MS = 100;

/** When an acquire with `waitMs` sent at `nowMs` gives up: its wait plus ANSWER_GRACE_MS; never for no wait. */
export function giveUpAtMs(waitMs: number | undefined, nowMs: number): number {
  return waitMs === undefined ? Number.POSITIVE_INFINITY : nowMs + waitMs + ANSWER_GRACE_MS;
}

/**
 * The client's own deadline of every acquire with a finite wait: one interval timer per session,
 * running only while such an acquire is in flight (no timer per acquire), gives up on each acquire
 * still unanswered at its `giveUpAtMs`: the caller's promise rejects with 'timeout' and `withdraw`
 * sends a cancel. The request stays registered, so a grant that arrives later is released (and a
 * resume re-sends it as a try-once plus cancel): an unknown outcome is withdrawn, never left held.
 */
export class AcquireDeadlines<T extends Deadlined = PendingAcquire> {
  readonly #acquires: ReadonlyMap<string, T>;
  readonly #now: MonotonicClock;
  readonly #withdraw: (attempt: T) => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(acquires: ReadonlyMap<string, T>, now: MonotonicClock, withdraw: (attempt: T) => void) {
    this.#acquires = acquires;
    this.#now = now;
    this.#withdraw = withdraw;
  }

  /** An acquire with a finite wait was registered: make sure the sweep runs. */
  watch(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#sweep(), DEADLINE_SWEEP_MS);
    this.#timer.unref();
  }

  /** Stops the sweep (the session ended). */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #sweep(): void {
    const now = this.#now();
    let waiting = false;
    for (const attempt of this.#acquires.values()) {
      if (attempt.abandoned || attempt.giveUpAtMs === Number.POSITIVE_INFINITY) continue;
      if (attempt.giveUpAtMs > now) {
        waiting = true;
        continue;
      }
      attempt.abandoned = true;
      const { name, waitMs } = attempt.request;
      const message = `"${name}": no answer within acquire.wait of ${waitMs} ms + ${ANSWER_GRACE_MS} ms (coordinator unreachable or its store stalled); the acquire was withdrawn`;
      attempt.fail(new TurnstileError("timeout", message));
      this.#withdraw(attempt);
    }
    if (!waiting) this.stop();
  }
}
