import type { Election, Leader } from "../../client/index.js";
import { EventWaiters } from "./event-waiters.js";

/**
 * Runs `election.observe()` in the background and records every leader it reports (null for
 * none), so a test can wait for a condition on the sequence. `stop()` aborts the observation.
 */
export class LeaderLog {
  readonly seen: (Leader | null)[] = [];
  /** What the observation ended with (an error, or "done"), once it has. */
  ended?: unknown;
  private readonly controller = new AbortController();
  private readonly done: Promise<void>;
  private readonly waiters = new EventWaiters();

  constructor(election: Election) {
    this.done = (async () => {
      try {
        for await (const leader of election.observe({ signal: this.controller.signal })) {
          this.seen.push(leader);
          this.waiters.notify();
        }
        this.ended = "done";
      } catch (error) {
        this.ended = error;
      }
      this.waiters.notify();
    })();
  }

  /** Fencing tokens of the leaders seen, without the nulls. */
  get tokens(): bigint[] {
    return this.seen.flatMap((l) => (l ? [l.fencingToken] : []));
  }

  /** The latest report. */
  get current(): Leader | null | undefined {
    return this.seen[this.seen.length - 1];
  }

  /** Resolves once `done()` holds, re-evaluated on every report; rejects after `timeoutMs`. */
  until(done: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    return this.waiters.until(done, timeoutMs, () => {
      const seen = this.seen.map((l) => (l ? String(l.fencingToken) : "null")).join(", ");
      return `timed out waiting for ${what}; seen: [${seen}]`;
    });
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.done;
  }
}
