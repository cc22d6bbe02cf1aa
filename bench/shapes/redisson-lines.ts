import { jainIndex, summarize } from "../stats.js";
import { DISCIPLINES, type Discipline, type HandOffResult } from "../workloads/hand-off.js";
import type { SpreadResult } from "../workloads/spread.js";

/** The implementation id of each Redisson lock the Java harness runs. */
export const REDISSON_IDS = { rlock: "redisson-rlock", fair: "redisson-fair" } as const;

/** One line the harness prints (bench/redisson/.../RedissonBench.java). */
interface HarnessLine {
  workload: "handoff" | "spread";
  lock: keyof typeof REDISSON_IDS;
  /** Hand-off lines only: the discipline (older harness builds print none: after-turn). */
  discipline?: Discipline;
  n: number;
  ops: number;
  seconds: number;
  cpuSeconds: number;
  violations: number;
  counts: number[];
  samplesMs: number[];
}

/**
 * Turns the harness's output (one JSON object a line; other lines ignored) into hand-off and spread
 * rows like the bench's own. Its client CPU is the JVM's; it has no Redis counters (the harness runs
 * every configuration back to back). Throws naming a line that is JSON but not a harness result.
 */
export function parseRedissonOutput(stdout: string): { handOff: HandOffResult[]; spread: SpreadResult[] } {
  const handOff: HandOffResult[] = [];
  const spread: SpreadResult[] = [];
  for (const raw of stdout.split("\n")) {
    const line = raw.trim();
    if (!line.startsWith("{")) continue;
    const r = JSON.parse(line) as HarnessLine;
    const id = REDISSON_IDS[r.lock];
    const ok = id && (r.workload === "handoff" || r.workload === "spread") && Array.isArray(r.samplesMs);
    const discipline = r.discipline ?? "after-turn";
    if (!ok || !(r.seconds > 0) || !DISCIPLINES.includes(discipline))
      throw new Error(`redisson harness: not a result line: ${line.slice(0, 120)}`);
    const counters = { seconds: r.seconds, clientCpuSeconds: r.cpuSeconds };
    if (r.workload === "handoff") {
      handOff.push({
        impl: id,
        contenders: r.n,
        discipline,
        handOffs: r.ops,
        handOffsPerS: r.ops / r.seconds,
        gap: summarize([...r.samplesMs]),
        gapsMs: [...r.samplesMs].sort((a, b) => a - b),
        fairness: jainIndex(r.counts),
        toWaiterShare: Number.NaN,
        violations: r.violations,
        errors: 0,
        counters,
      });
    } else {
      spread.push({
        impl: id,
        workers: r.n,
        cycles: r.ops,
        cyclesPerS: r.ops / r.seconds,
        acquire: summarize([...r.samplesMs]),
        acquireMs: [...r.samplesMs].sort((a, b) => a - b),
        violations: r.violations,
        errors: 0,
        counters,
      });
    }
  }
  return { handOff, spread };
}
