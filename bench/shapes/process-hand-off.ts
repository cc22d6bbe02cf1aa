import { randomBytes } from "node:crypto";
import { jainIndex, summarize } from "../stats.js";
import type { HandOffResult } from "../workloads/hand-off.js";
import { type CounterSources, measureWindow } from "../workloads/measurement-window.js";
import { type BoardEvent, boardStats } from "./board-events.js";
import { ContenderProcesses } from "./contender-processes.js";

/** Settings of a hand-off run with each contender in its own process. */
export interface ProcessHandOffOptions {
  address: string;
  contenders: number;
  warmupMs: number;
  measureMs: number;
  sources: CounterSources;
  progress: (detail: string) => void;
}

/**
 * The hand-off workload with each contender in its own process (the compiled client under plain
 * node), this process keeping the board: after an entry it tells the previous holder to ask again,
 * and once that request is issued (and a turn later) tells the new holder to release. Gaps are
 * taken from the contenders' own timestamps on the shared monotonic clock, so the board's messages
 * are outside them; client CPU is the contender processes' (/proc).
 */
export async function runProcessHandOff(o: ProcessHandOffOptions): Promise<HandOffResult> {
  const n = o.contenders;
  const lock = `bench-handoff-proc-${n}-${randomBytes(4).toString("hex")}`;
  o.progress(`starting ${n} contender processes`);
  const fleet = await ContenderProcesses.start(
    Array.from({ length: n }, () => ({ mode: "handoff", addresses: [o.address], lock, workers: 1 })),
  );
  const events: BoardEvent[] = [];
  let holder: number | undefined;
  let waitingFor: { previous: number; holder: number } | undefined;
  let stopping = false;
  let errors = 0;
  let lastError: string | undefined;
  const release = (who: number) => setImmediate(() => stopping || fleet.send(who, { type: "release" }));
  fleet.onMessage((who, m) => {
    const t = Number(m.t);
    if (m.type === "issued") {
      events.push({ kind: "issued", who, t });
      if (waitingFor?.previous === who) {
        release(waitingFor.holder);
        waitingFor = undefined;
      }
    } else if (m.type === "entered") {
      events.push({ kind: "enter", who, t });
      const previous = holder;
      holder = who;
      if (stopping) return;
      if (previous === undefined || previous === who) release(who);
      else {
        waitingFor = { previous, holder: who };
        fleet.send(previous, { type: "acquire" });
      }
    } else if (m.type === "releasing") events.push({ kind: "release", who, t });
    else if (m.type === "error" && !stopping) {
      // After "stop", a waiting acquire ends with "session closed by the client": not an error of the run.
      errors++;
      lastError = m.message;
    }
  });
  const window = { from: 0, to: 0 };
  const state = {
    set measuring(on: boolean) {
      if (on) window.from = Number(process.hrtime.bigint());
      else window.to = Number(process.hrtime.bigint());
    },
  };
  fleet.broadcast({ type: "acquire" });
  const cpuBefore = fleet.cpuSeconds();
  const counters = await measureWindow(o, state as { measuring: boolean }, (phase, ms) =>
    o.progress(`${phase} ${(ms / 1000).toFixed(1)} s, ${events.length} events`),
  );
  const cpuAfter = fleet.cpuSeconds();
  counters.clientCpuSeconds = cpuAfter.reduce((sum, c, i) => sum + c - cpuBefore[i], 0);
  stopping = true;
  o.progress("stopping contender processes");
  await fleet.stop();
  const stats = boardStats(events, n, window.from, window.to);
  const handOffs = stats.gapsMs.length;
  return {
    impl: "turnstile-processes",
    contenders: n,
    // The release waits for the board's message and a turn: never in the same turn as the re-acquire.
    discipline: "after-turn",
    handOffs,
    handOffsPerS: handOffs / counters.seconds,
    gap: summarize(stats.gapsMs),
    gapsMs: stats.gapsMs,
    fairness: jainIndex(stats.counts),
    toWaiterShare: handOffs ? stats.toWaiter / handOffs : Number.NaN,
    violations: stats.violations,
    errors,
    lastError,
    counters,
  };
}
