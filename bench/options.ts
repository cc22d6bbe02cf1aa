import { parseArgs } from "node:util";
import { DISCIPLINES, type Discipline } from "./workloads/hand-off.js";

/** How the benchmark runs: sizes and durations of every workload. */
export interface BenchOptions {
  quick: boolean;
  /** Run the anatomy of a hand-off (wire marks) and its floors. */
  anatomy: boolean;
  /** Run the shapes users run: contenders in processes, Redisson, the scale-out over coordinators. */
  shapes: boolean;
  /** Only the scale-outs (one Redis, a Cluster): no one-process workloads, anatomy, process rows, Redisson or fleet. */
  scaleOutOnly: boolean;
  /** Implementation ids to run (all when empty). */
  only: string[];
  rounds: number;
  warmupMs: number;
  measureMs: number;
  handOffContenders: number[];
  /** The hand-off disciplines to run (both by default): when a holder releases, relative to the re-acquire. */
  disciplines: Discipline[];
  spreadWorkers: number[];
  fleet: { sessions: number; locksPerSession: number; ttlMs: number; connections: number; measureMs: number } | null;
  /** Directory for a coordinator CPU profile (node --cpu-prof), or undefined. */
  profileDir?: string;
  /** Where BENCHMARKS.md and the plots go (default: the repository). */
  outDir: string;
  /** The command line as typed, for the report. */
  command: string;
}

export const USAGE = `Usage: npm run bench [-- options]

  --quick               short run (~3 min): 1 round of 1.5 s windows, fleet of 1,000 sessions
  --no-anatomy          leave out the anatomy of a hand-off (wire marks and bare floors)
  --no-shapes           leave out contenders in their own processes, the Redisson rows and the scale-outs
  --scale-out-only      run only the scale-outs over 1, 2 and 4 coordinators (one Redis; a Cluster of 3 masters)
  --only ID,ID          run only these implementations (turnstile, turnstile-replicated,
                        turnstile-embedded, turnstile-mtls, turnstile-fencing, floor,
                        floor-queued, spin, redis-semaphore, redlock, etcd)
  --discipline D        hand-off discipline: at-once (release in the same turn as the previous
                        holder's re-acquire), after-turn (one turn later) or both (default)
  --rounds N            measurement rounds per workload, implementations interleaved (default 3)
  --measure-ms MS       measurement window per round (default 3000)
  --fleet-sessions N    idle-fleet sessions (default 10000; 0 skips the fleet)
  --fleet-ttl-ms MS     idle-fleet session TTL (default 30000, --quick 15000; a keepalive every TTL/3)
  --profile DIR         run the Redis-backed coordinator under node --cpu-prof, profiles written to DIR
                        (the embedded-store one's, when it runs, to DIR/embedded), and split their CPU by category
  --out DIR             write BENCHMARKS.md and the plots under DIR instead of the repository
`;

/** Parses the command line (after `npm run bench --`); throws with a message naming a bad option. */
export function parseOptions(argv: string[], repoRoot: string): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      "no-anatomy": { type: "boolean", default: false },
      "no-shapes": { type: "boolean", default: false },
      "scale-out-only": { type: "boolean", default: false },
      only: { type: "string" },
      rounds: { type: "string" },
      discipline: { type: "string" },
      "measure-ms": { type: "string" },
      "fleet-sessions": { type: "string" },
      "fleet-ttl-ms": { type: "string" },
      profile: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) throw new UsageRequested();
  const quick = values.quick === true;
  const sessions = int("--fleet-sessions", values["fleet-sessions"], quick ? 1000 : 10_000, 0);
  const scaleOutOnly = values["scale-out-only"] === true;
  if (scaleOutOnly && values["no-shapes"])
    throw new Error("--scale-out-only: the scale-outs are shapes: drop --no-shapes");
  return {
    quick,
    anatomy: values["no-anatomy"] !== true && !scaleOutOnly,
    shapes: values["no-shapes"] !== true,
    scaleOutOnly,
    only: values.only ? values.only.split(",").map((s) => s.trim()) : [],
    rounds: int("--rounds", values.rounds, quick ? 1 : 3, 1),
    warmupMs: quick ? 500 : 1000,
    measureMs: int("--measure-ms", values["measure-ms"], quick ? 1500 : 3000, 100),
    handOffContenders: scaleOutOnly ? [] : [8, 64],
    disciplines: disciplines(values.discipline),
    spreadWorkers: scaleOutOnly ? [] : [16, 256],
    fleet:
      sessions === 0 || scaleOutOnly
        ? null
        : {
            sessions,
            locksPerSession: 10,
            ttlMs: int("--fleet-ttl-ms", values["fleet-ttl-ms"], quick ? 15_000 : 30_000, 1000),
            connections: 50,
            measureMs: quick ? 5000 : 20_000,
          },
    profileDir: values.profile,
    outDir: values.out ?? repoRoot,
    command: ["npm run bench", ...(argv.length ? ["--", ...argv] : [])].join(" "),
  };
}

/** Thrown for --help: the caller prints the usage and exits 0. */
export class UsageRequested extends Error {}

function disciplines(raw: string | undefined): Discipline[] {
  if (raw === undefined || raw === "both") return [...DISCIPLINES];
  if ((DISCIPLINES as readonly string[]).includes(raw)) return [raw as Discipline];
  throw new Error(`--discipline: expected at-once, after-turn or both, got "${raw}"`);
}

function int(flag: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${flag}: expected an integer >= ${min}, got "${raw}"`);
  return n;
}
