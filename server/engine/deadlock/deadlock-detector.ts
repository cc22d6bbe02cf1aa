import type { Logger } from "pino";
import type { LockState, Store } from "../../store/store.js";
import { StoreOutageLog } from "../../store/store-outage-log.js";
import type { HeldWait } from "../../store/wait-registry.js";
import { cycleStillHolds, type Deadlock, findDeadlocks } from "./wait-for-graph.js";

/** How often a coordinator with hold-and-wait acquires looks for cycles: with two reads, the detection bound. */
export const DETECT_INTERVAL_MS = 300;

/**
 * One look for deadlocks: reads every coordinator's hold-and-wait entries and the holders of the locks
 * they wait for, finds the cycles, and for each whose victim `ownVictim` finds among this coordinator's
 * waiters, reads the cycle's locks again and fails the victim only if the cycle is still there.
 * Store failures are logged (once per outage) and the next look tries again.
 */
export class DeadlockDetector {
  private readonly outage: StoreOutageLog;

  constructor(
    private readonly store: Pick<Store, "describe" | "waits">,
    log: Logger,
    private readonly ownVictim: (w: HeldWait) => ((d: Deadlock) => void) | undefined,
  ) {
    this.outage = new StoreOutageLog(log);
  }

  /** Looks once; resolves when every victim it found here has been failed (or has left by itself). */
  async look(): Promise<void> {
    try {
      const waits = await this.store.waits.list(Date.now());
      if (waits.length < 2) return this.outage.succeeded();
      const deadlocks = findDeadlocks(waits, await this.states(waits));
      for (const d of deadlocks) {
        const fail = this.ownVictim(d.cycle[0]);
        if (!fail) continue; // another coordinator's waiter: it fails it
        // Read again: a holder may have left meanwhile, so nothing is failed on a stale graph.
        if (cycleStillHolds(d.cycle, await this.states(d.cycle))) this.ownVictim(d.cycle[0])?.(d);
      }
      this.outage.succeeded();
    } catch (err) {
      this.outage.failed("deadlock detection", err);
    }
  }

  /** The states of the locks `waits` wait for, read in parallel. */
  private async states(waits: readonly HeldWait[]): Promise<Map<string, LockState>> {
    const names = [...new Set(waits.map((w) => w.name))];
    const states = await Promise.all(names.map((name) => this.store.describe(name)));
    return new Map(states.map((s) => [s.name, s]));
  }
}
