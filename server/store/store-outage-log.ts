import type { Logger } from "pino";
import { StoreUnavailableError } from "./store-unavailable-error.js";

/**
 * Logs store failures once per outage instead of once per failed operation: the first failure at
 * warn with its message (no stack), every failure at debug with its stack, and the first success
 * after failures at info with how many failed, of what kind, and for how long. A Redis outage thus
 * logs two lines however many keepalives fail meanwhile. Failures that are not StoreUnavailableError
 * are not outages: callers log those as before.
 */
export class StoreOutageLog {
  private failures = 0;
  private startedAt = 0;
  private byWhat = new Map<string, number>();

  constructor(private readonly log: Logger) {}

  /** Whether `err` belongs to an outage (the store could not be reached or did not answer). */
  static isOutage(err: unknown): boolean {
    return err instanceof StoreUnavailableError;
  }

  /** True while failures have been seen and no success since. */
  get inOutage(): boolean {
    return this.failures > 0;
  }

  /** One store failure of `what` (e.g. "keepalive renewal"); `context` goes on the debug line. */
  failed(what: string, err: unknown, context: Record<string, unknown> = {}): void {
    this.log.debug({ err, what, ...context }, `${what} failed`);
    this.byWhat.set(what, (this.byWhat.get(what) ?? 0) + 1);
    if (this.failures++ > 0) return;
    this.startedAt = performance.now();
    const error = err instanceof Error ? err.message : String(err);
    this.log.warn(
      { what, error },
      "store errors began: logged once until the store answers again (each failure at debug level)",
    );
  }

  /** A store operation succeeded: ends the outage, if there was one (a compare otherwise). */
  succeeded(): void {
    if (this.failures === 0) return;
    const outageMs = Math.round(performance.now() - this.startedAt);
    this.log.info({ failures: this.failures, byWhat: Object.fromEntries(this.byWhat), outageMs }, "store errors ended");
    this.failures = 0;
    this.byWhat = new Map();
  }
}
