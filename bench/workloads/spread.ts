import { randomBytes } from "node:crypto";
import { ExclusionChecker } from "../exclusion-checker.js";
import type { HeldLock, LockImpl } from "../impls/lock-impl.js";
import { type LatencySummary, summarize } from "../stats.js";
import { closeAll, connectAll, drain } from "./contenders.js";
import { type CounterSources, measureWindow, type WindowCounters } from "./measurement-window.js";

/** Settings of one spread run. */
export interface SpreadOptions {
  workers: number;
  warmupMs: number;
  measureMs: number;
  sources: CounterSources;
  progress: (detail: string) => void;
}

/** What one spread run measured inside its window. */
export interface SpreadResult {
  impl: string;
  workers: number;
  cycles: number;
  cyclesPerS: number;
  /** From calling acquire to holding the (uncontended) lock. */
  acquire: LatencySummary;
  acquireMs: number[];
  violations: number;
  errors: number;
  lastError?: string;
  counters: WindowCounters;
}

/**
 * W workers, each with its own client, loop acquire → release on a lock of their own: no
 * contention, so this measures the cost of one uncontended lock cycle under concurrency.
 */
export async function runSpread(impl: LockImpl, options: SpreadOptions): Promise<SpreadResult> {
  const w = options.workers;
  const clients = await connectAll(impl, w, options.progress);
  const prefix = `bench-spread-${w}-${randomBytes(4).toString("hex")}`;
  const checkers = clients.map(() => new ExclusionChecker());
  const state = { measuring: false, stopping: false };
  const latencies: number[] = [];
  let cycles = 0;
  let started = 0;
  let errors = 0;
  let lastError: string | undefined;

  const worker = async (i: number) => {
    const name = `${prefix}-${i}`;
    while (!state.stopping) {
      const askedAt = performance.now();
      let lock: HeldLock;
      try {
        lock = await clients[i].acquire(name);
      } catch (err) {
        errors++;
        lastError = String(err);
        continue;
      }
      const now = performance.now();
      checkers[i].enter(i);
      started++;
      if (state.measuring) {
        cycles++;
        latencies.push(now - askedAt);
      }
      checkers[i].leave(i);
      try {
        await lock.release();
      } catch (err) {
        errors++;
        lastError = String(err);
      }
    }
  };
  const running = clients.map((_, i) => worker(i));
  const counters = await measureWindow(options, state, (phase, ms) =>
    options.progress(`${phase} ${(ms / 1000).toFixed(1)} s, ${started} cycles`),
  );
  state.stopping = true;
  await drain(running, clients, options.progress);
  await closeAll(clients);
  return {
    impl: impl.id,
    workers: w,
    cycles,
    cyclesPerS: cycles / counters.seconds,
    acquire: summarize(latencies),
    acquireMs: latencies,
    violations: checkers.reduce((sum, c) => sum + c.violations, 0),
    errors,
    lastError,
    counters,
  };
}
