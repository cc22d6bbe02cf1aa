import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startCoordinator } from "../env/coordinator-process.js";
import { type LatencySummary, summarize } from "../stats.js";
import { type Discipline, type HandOffResult, runHandOff } from "../workloads/hand-off.js";
import { runSpread, type SpreadResult } from "../workloads/spread.js";
import { type Floors, measureFloors } from "./floors.js";
import { type Chain, type ChainLegs, followChains, HAND_OFF, UNCONTENDED_ACQUIRE } from "./leg-chains.js";
import { MarkRecorder } from "./mark-recorder.js";
import { markedTurnstileImpl } from "./marked-turnstile-impl.js";
import { parseMarks } from "./marks.js";

const FRESH_PROCESS_WARMUP_MS = 1500;
const RECORDER = fileURLToPath(new URL("./record-coordinator-marks.ts", import.meta.url));

/** One leg across the operations followed: its name and the summary of its durations (ms). */
export interface LegSummary {
  leg: string;
  summary: LatencySummary;
}

/** The legs of one kind of operation. */
export interface ChainSummary {
  legs: LegSummary[];
  total: LatencySummary;
  /** Operations followed end to end, and those with a mark missing (left out). */
  followed: number;
  unmatched: number;
}

/** The hand-offs of one discipline: their legs, and the run the marks came from. */
export interface AnatomyHandOff {
  discipline: Discipline;
  chain: ChainSummary;
  /** The hand-off run the marks came from (its gap and rate, with the marks being recorded). */
  run: HandOffResult;
}

/** What the anatomy measured: the hand-off in each discipline, the uncontended acquire, the floors. */
export interface AnatomyResult {
  contenders: number;
  /** One per discipline run, in the order run (at-once first when both ran). */
  handOffs: AnatomyHandOff[];
  uncontended: ChainSummary;
  uncontendedRun: SpreadResult;
  floors: Floors;
}

/** Settings of one anatomy run. */
export interface AnatomyOptions {
  redisUrl: string;
  contenders: number;
  /** The hand-off disciplines to follow, each a run of its own. */
  disciplines: readonly Discipline[];
  warmupMs: number;
  measureMs: number;
  /** Sequential trips per floor. */
  floorTrips: number;
  progress: (detail: string) => void;
}

/**
 * Starts a coordinator on `redisUrl` that records its wire marks, runs the hand-off workload
 * (`contenders` on one lock) in each discipline and one worker's uncontended acquire → release loop against it with
 * this process's client marks recorded, follows every hand-off and acquire through both processes'
 * marks, then measures the bare floors (grpc-js echo, EVALSHA, echo + EVALSHA) on the same Redis.
 */
export async function runAnatomy(options: AnatomyOptions): Promise<AnatomyResult> {
  const dir = mkdtempSync(join(tmpdir(), "turnstile-anatomy-"));
  const marksFile = join(dir, "coordinator-marks.jsonl");
  const recorder = new MarkRecorder("client");
  const coordinator = await startCoordinator(options.redisUrl, undefined, [], {
    nodeArgs: ["--import", RECORDER],
    env: { BENCH_ANATOMY_MARKS: marksFile },
  });
  try {
    const impl = markedTurnstileImpl(coordinator.address, recorder);
    const common = {
      // Its coordinator is a fresh process: give the JIT a longer warm-up than the bench's own rows.
      warmupMs: options.warmupMs + FRESH_PROCESS_WARMUP_MS,
      measureMs: options.measureMs,
      sources: { serverPid: coordinator.pid },
      progress: options.progress,
    };
    const runs: { discipline: Discipline; run: HandOffResult; from: number; to: number }[] = [];
    for (const discipline of options.disciplines) {
      const from = Number(process.hrtime.bigint());
      const run = await runHandOff(impl, { ...common, contenders: options.contenders, discipline });
      runs.push({ discipline, run, from, to: Number(process.hrtime.bigint()) });
    }
    const h1 = Number(process.hrtime.bigint());
    const uncontendedRun = await runSpread(impl, { ...common, workers: 1 });
    const u1 = Number(process.hrtime.bigint());
    recorder.close();
    await coordinator.stop(); // it writes its marks as it exits
    const marks = [...recorder.marks(), ...parseMarks(readFileSync(marksFile, "utf8"))];
    const warmNs = (options.warmupMs + FRESH_PROCESS_WARMUP_MS) * 1e6;
    options.progress("floors: grpc-js echo, EVALSHA, echo + EVALSHA");
    const floors = await measureFloors(options.redisUrl, options.floorTrips);
    return {
      contenders: options.contenders,
      handOffs: runs.map(({ discipline, run, from, to }) => ({
        discipline,
        chain: summarizeChain(HAND_OFF, followChains(marks, HAND_OFF, from + warmNs, to)),
        run,
      })),
      uncontended: summarizeChain(UNCONTENDED_ACQUIRE, followChains(marks, UNCONTENDED_ACQUIRE, h1 + warmNs, u1)),
      uncontendedRun,
      floors,
    };
  } finally {
    recorder.close();
    await coordinator.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Median, p99 and the rest of every leg of the operations followed. */
export function summarizeChain(chain: Chain, followed: { chains: ChainLegs[]; unmatched: number }): ChainSummary {
  const legs = chain.steps.map((step, i) => ({
    leg: step.leg,
    summary: summarize(followed.chains.flatMap((c) => (c.legsMs[i] === undefined ? [] : [c.legsMs[i] as number]))),
  }));
  return {
    legs,
    total: summarize(followed.chains.map((c) => c.totalMs)),
    followed: followed.chains.length,
    unmatched: followed.unmatched,
  };
}
