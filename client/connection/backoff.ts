import { TurnstileError } from "../turnstile-error.js";

/** How reconnect attempts are spaced: exponential growth with full jitter. All optional. */
export interface BackoffOptions {
  /** Upper bound of the first delay in ms; default 50. */
  baseMs?: number;
  /** Growth of the upper bound per failed attempt; default 2. */
  factor?: number;
  /** Cap of the upper bound in ms; default 1000. */
  maxMs?: number;
}

/** The defaults of BackoffOptions. */
export const DEFAULT_BACKOFF: Required<BackoffOptions> = { baseMs: 50, factor: 2, maxMs: 1000 };

/**
 * Delays between reconnect attempts: the n-th delay (from 0) is uniform in
 * [0, min(maxMs, baseMs × factor^n)) ("full jitter"), so clients that lost the same coordinator do
 * not all come back at once. `reset()` after a success starts again from `baseMs`.
 */
export class Backoff {
  readonly #options: Required<BackoffOptions>;
  readonly #random: () => number;
  #attempt = 0;

  /** Throws a TurnstileError ('invalid-argument') naming the option when one is out of range. */
  constructor(options: BackoffOptions = {}, random: () => number = Math.random) {
    const merged = { ...DEFAULT_BACKOFF, ...options };
    const { baseMs, factor, maxMs } = merged;
    if (!(Number.isFinite(baseMs) && baseMs > 0)) invalid(`backoff.baseMs must be a positive number, got ${baseMs}`);
    if (!(Number.isFinite(factor) && factor >= 1)) invalid(`backoff.factor must be a number >= 1, got ${factor}`);
    if (!(Number.isFinite(maxMs) && maxMs >= baseMs))
      invalid(`backoff.maxMs must be >= baseMs (${baseMs}), got ${maxMs}`);
    this.#options = merged;
    this.#random = random;
  }

  /** Failed attempts since the last reset. */
  get attempt(): number {
    return this.#attempt;
  }

  /** The upper bound of the delay before attempt `n` (0-based): min(maxMs, baseMs × factor^n). */
  ceilingMs(n: number): number {
    const { baseMs, factor, maxMs } = this.#options;
    return Math.min(maxMs, baseMs * factor ** n);
  }

  /** Returns the delay before the next attempt and counts the attempt. */
  nextDelayMs(): number {
    const delayMs = this.#random() * this.ceilingMs(this.#attempt);
    this.#attempt += 1;
    return delayMs;
  }

  /** Starts over from `baseMs` (a stream opened). */
  reset(): void {
    this.#attempt = 0;
  }
}

function invalid(message: string): never {
  throw new TurnstileError("invalid-argument", message);
}
