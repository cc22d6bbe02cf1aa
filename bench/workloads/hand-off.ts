import { randomBytes } from "node:crypto";
import { ExclusionChecker } from "../exclusion-checker.js";
import type { HeldLock, LockImpl } from "../impls/lock-impl.js";
import { jainIndex, type LatencySummary, summarize } from "../stats.js";
import { closeAll, connectAll, drain } from "./contenders.js";
import { HandOffBoard } from "./hand-off-board.js";
import { type CounterSources, measureWindow, type WindowCounters } from "./measurement-window.js";

/**
 * When a holder releases, relative to the previous holder's new acquire: `at-once` in the same turn of
 * the event loop as that acquire was issued (a busy fleet: the next request often travels with the
 * release), `after-turn` one turn later (the acquire has reached the wire first).
 */
export type Discipline = "at-once" | "after-turn";

/** Both disciplines, in the order the bench runs and reports them. */
export const DISCIPLINES: readonly Discipline[] = ["at-once", "after-turn"];

/** How a discipline reads in the report. */
export const DISCIPLINE_TEXT: Record<Discipline, string> = {
  "at-once": "released at once (same turn as the re-acquire)",
  "after-turn": "released after one turn",
};

/** Settings of one hand-off run. */
export interface HandOffOptions {
  contenders: number;
  discipline: Discipline;
  warmupMs: number;
  measureMs: number;
  sources: CounterSources;
  progress: (detail: string) => void;
}

/** What one hand-off run measured (everything counted inside the measurement window). */
export interface HandOffResult {
  impl: string;
  contenders: number;
  discipline: Discipline;
  handOffs: number;
  handOffsPerS: number;
  /** Start of a release to the next holder having the lock. */
  gap: LatencySummary;
  /** All gaps in ms, ascending (for the CDF plot). */
  gapsMs: number[];
  fairness: number;
  violations: number;
  /** Share of hand-offs whose new holder had asked before the release started (should be 1). */
  toWaiterShare: number;
  /** Acquires or releases that failed (and were retried). */
  errors: number;
  lastError?: string;
  counters: WindowCounters;
}

/**
 * N contenders on one lock. After releasing, a contender re-enters only once another contender
 * has taken the lock, so every release is a hand-off to a waiter; the holder releases once the
 * previous holder's new acquire is issued, in the same turn or one turn later (`discipline`). The gap
 * is measured on this process's clock from the start of a release to the moment the next holder's
 * acquire resolved.
 */
export async function runHandOff(impl: LockImpl, options: HandOffOptions): Promise<HandOffResult> {
  const n = options.contenders;
  const clients = await connectAll(impl, n, options.progress);
  const name = `bench-handoff-${n}-${randomBytes(4).toString("hex")}`;
  const board = new HandOffBoard(n);
  const checker = new ExclusionChecker();
  const state = { measuring: false, stopping: false };
  const counts = new Array<number>(n).fill(0);
  const gaps: number[] = [];
  let lastReleaseAt = Number.NaN;
  let toWaiter = 0;
  let errors = 0;
  let lastError: string | undefined;

  const contender = async (i: number) => {
    let myEntry = -1;
    while (!state.stopping) {
      await board.untilEnteredAfter(myEntry);
      if (state.stopping) break;
      const askedAt = performance.now();
      let lock: HeldLock;
      try {
        const acquiring = clients[i].acquire(name);
        board.issued(i);
        lock = await acquiring;
      } catch (err) {
        errors++;
        lastError = String(err);
        continue;
      }
      const now = performance.now();
      checker.enter(i);
      const { entry, previous } = board.enter(i);
      myEntry = entry;
      if (state.measuring && Number.isFinite(lastReleaseAt)) {
        counts[i]++;
        gaps.push(now - lastReleaseAt);
        if (askedAt < lastReleaseAt) toWaiter++;
      }
      if (previous !== undefined && previous !== i && !state.stopping) {
        await board.untilIssuedSince(previous, entry);
        // after-turn: let a request issued in a microtask or flushed on the next turn reach the wire first.
        if (options.discipline === "after-turn") await new Promise(setImmediate);
      }
      checker.leave(i);
      lastReleaseAt = performance.now();
      try {
        await lock.release();
      } catch (err) {
        errors++;
        lastError = String(err);
      }
    }
  };
  const running = clients.map((_, i) => contender(i));
  const counters = await measureWindow(options, state, (phase, ms) =>
    options.progress(`${phase} ${(ms / 1000).toFixed(1)} s, ${board.entries} entries`),
  );
  state.stopping = true;
  board.close();
  await drain(running, clients, options.progress);
  await closeAll(clients);
  const handOffs = counts.reduce((a, b) => a + b, 0);
  return {
    impl: impl.id,
    contenders: n,
    discipline: options.discipline,
    handOffs,
    handOffsPerS: handOffs / counters.seconds,
    gap: summarize(gaps),
    gapsMs: gaps,
    fairness: jainIndex(counts),
    toWaiterShare: handOffs ? toWaiter / handOffs : Number.NaN,
    violations: checker.violations,
    errors,
    lastError,
    counters,
  };
}
