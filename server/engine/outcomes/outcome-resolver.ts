import type { StoreOutageLog } from "../../store/store-outage-log.js";
import { outcomeUnknown, StoreUnavailableError } from "../../store/store-unavailable-error.js";

/** How one `resolve` treats store failures. */
export interface ResolveOptions {
  /** Keep going while this is true; once false the attempts stop and `resolve` resolves `undefined`. */
  wanted?: () => boolean;
  /** Retry even when the first attempt is known not to have changed anything (releases: the client asked). */
  retryUnchanged?: boolean;
  /** Called once, when the first attempt's outcome turns out unknown (before any retry). */
  onUnknown?: () => void;
}

const FIRST_DELAY_MS = 50;
// Short: the first retry after the store is back (a failover's new master named) is when locking resumes.
const MAX_DELAY_MS = 200;

/**
 * Resolves store operations whose outcome is unknown (a command that timed out or lost its
 * connection may still have run) by running them again until the store answers: every operation
 * passed here is idempotent, so the first answer after a failure is the truth. On one Redis
 * connection the retry runs after the original, wherever the original ended up.
 */
export class OutcomeResolver {
  private stopped = false;
  private readonly sleeping = new Set<{ timer: NodeJS.Timeout; wake: () => void }>();
  /** Operations whose outcome is being resolved right now (for tests and logs). */
  unresolved = 0;

  /** Failures while retrying are counted in `outage` (logged once per outage), not logged each. */
  constructor(private readonly outage: StoreOutageLog) {}

  /**
   * Runs `op` and resolves with its answer. A first failure that changed nothing rejects as is
   * (unless `retryUnchanged`); an unknown outcome is retried with back-off until the store answers,
   * `wanted()` turns false (resolves undefined) or the resolver stops (rejects with the last error).
   */
  resolve<T>(op: () => Promise<T>, options: ResolveOptions = {}): Promise<T | undefined> {
    // No async wrapper: the answer of a first attempt that succeeds (nearly every call) passes through.
    const failed = (err: unknown): Promise<T | undefined> => {
      if (!(err instanceof StoreUnavailableError)) throw err;
      if (!outcomeUnknown(err) && !options.retryUnchanged) throw err;
      if (outcomeUnknown(err)) options.onUnknown?.();
      return this.retry(op, options.wanted ?? (() => true), err);
    };
    let first: Promise<T>;
    try {
      first = op();
    } catch (err) {
      return Promise.resolve().then(() => failed(err));
    }
    return first.then(undefined, failed);
  }

  /** Ends every wait; operations still unresolved reject (coordinator shutdown). */
  stop(): void {
    this.stopped = true;
    for (const s of this.sleeping) {
      clearTimeout(s.timer);
      s.wake();
    }
    this.sleeping.clear();
  }

  private async retry<T>(op: () => Promise<T>, wanted: () => boolean, first: StoreUnavailableError) {
    this.unresolved++;
    let last: unknown = first;
    try {
      for (let attempt = 0; ; attempt++) {
        if (!wanted()) return undefined;
        if (this.stopped) throw last;
        // A timed-out command failed after commandTimeoutMs already; a refused one fails at once.
        await this.sleep(Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** attempt));
        if (!wanted()) return undefined;
        if (this.stopped) throw last;
        try {
          const answer = await op();
          this.outage.succeeded();
          return answer;
        } catch (err) {
          if (!(err instanceof StoreUnavailableError)) throw err;
          last = err;
          this.outage.failed("retry of an unknown outcome", err, { attempt });
        }
      }
    } finally {
      this.unresolved--;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const entry = {
        wake: resolve,
        timer: setTimeout(() => {
          this.sleeping.delete(entry);
          resolve();
        }, ms),
      };
      this.sleeping.add(entry);
    });
  }
}
