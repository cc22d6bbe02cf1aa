import type { MachineInfo } from "../env/machine-info.js";
import type { LockImpl } from "../impls/lock-impl.js";
import type { BenchOptions } from "../options.js";
import type { BenchResults } from "../run-plan.js";
import { DISCIPLINE_TEXT } from "../workloads/hand-off.js";
import { anatomySection } from "./anatomy-section.js";
import { limitsSection } from "./limits-section.js";
import type { Plot } from "./plots.js";
import { shapesSection } from "./shapes-section.js";
import { fleetTable, handOffTable, spreadTable } from "./tables.js";
import { targetRows, targetTable } from "./targets.js";

/** Everything the report is made of. */
export interface ReportInput {
  options: BenchOptions;
  machine: MachineInfo;
  impls: LockImpl[];
  results: BenchResults;
  plots: Plot[];
  notes: string[];
  /** The coordinator CPU profile breakdown, when run with --profile. */
  profile?: string;
}

/** Renders BENCHMARKS.md: machine, versions, command, targets, one table per workload, plots, limits. */
export function writeBenchmarksMd(input: ReportInput): string {
  const { options, machine, impls, results, plots, notes, profile } = input;
  const img = (prefix: string) =>
    plots.filter((p) => p.file.startsWith(prefix)).map((p) => `![${p.caption}](bench/results/${p.file})`);
  const m = machine;
  const out: string[] = [
    "# Benchmarks",
    "",
    `Written by \`${options.command}\` on ${m.date}. Every number below comes from that one run; rerun the`,
    "command to reproduce it (it starts its own redis-server, coordinators and etcd on free loopback ports).",
    "",
    "## Machine and versions",
    "",
    "| | |",
    "| --- | --- |",
    `| CPU | ${m.cores} × ${m.cpuModel} |`,
    `| memory | ${m.memoryGiB} GiB |`,
    `| OS | ${m.os}, kernel ${m.kernel} |`,
    `| 1-min load average at start / end | ${m.loadStart.toFixed(2)} / ${m.loadEnd?.toFixed(2) ?? "?"} (other work on the machine shows up here) |`,
    ...Object.entries(m.versions).map(([k, v]) => `| ${k} | ${v} |`),
    "",
    "## What runs",
    "",
    "- One `redis-server` (no persistence) serves every Redis-based implementation, one after another in the same run;",
    "  etcd runs as a single member with its data directory on tmpfs (`/dev/shm`).",
    "- Turnstile's coordinator is its own process, compiled as users run it (`node dist/bin/turnstile-cli.js serve --redis URL --listen 127.0.0.1:0`; the bench runs `npm run build` first when a source is newer);",
    "  the contenders of every implementation run in the bench process, each with its own client (connection,",
    "  session or lease). grpc-js puts the Turnstile clients of one process on one HTTP/2 connection.",
    ...(impls.some((i) => i.id === "turnstile-embedded")
      ? [
          "- *Turnstile (embedded store)* is a second coordinator process started the same way but without `--redis`,",
          "  so it keeps its locks in its own memory; its contenders use the same TypeScript client. It is the same",
          "  client and coordinator code with no Redis round trip and no Redis process busy beside them, there to",
          "  show how much of Turnstile's gap, throughput and CPU is the Redis hop. It is not a recommendation to",
          "  deploy that way: the embedded store serves one coordinator only and nothing it holds survives a restart.",
          "  Its Redis columns are empty, its server CPU is its own process's, and it is left out of the idle fleet",
          "  and the targets.",
        ]
      : []),
    ...(impls.some((i) => i.id === "turnstile-mtls")
      ? [
          "- *Turnstile (mTLS)* is a third coordinator process on the same Redis, serving over TLS and requiring client",
          "  certificates (`--tls-cert --tls-key --tls-client-ca`, EC P-256 certificates made with openssl for the run);",
          "  its clients present a client certificate. Its difference to the *Turnstile* row is the cost of TLS.",
        ]
      : []),
    ...(impls.some((i) => i.id === "turnstile-fencing")
      ? [
          "- *Turnstile (signed fencing proofs)* is another coordinator process on the same Redis, started with",
          "  `--fencing-key` (an Ed25519 key made for the run): every grant carries a signed proof (docs/fencing.md).",
          "  Its difference to the *Turnstile* row is the cost of one Ed25519 signature per grant.",
        ]
      : []),
    ...(impls.some((i) => i.id === "floor")
      ? [
          "- *Floor lock* (`bench/floor-lock/`) is not a lock to run but a bound: the least work a coordinator of",
          "  Turnstile's shape can do on this machine. It is a grpc-js server in its own process (run by tsx) with one",
          "  bidi stream per client carrying raw bytes (no protobuf, validation, sessions, leases, fencing tokens,",
          "  Queued answers or events), a FIFO queue per name in its memory, and one EVALSHA of a trivial two-call",
          "  script per request before it answers, as a coordinator that keeps its state in Redis must; a release's",
          "  grant is written to the next waiter before the release's own answer. Its rows say what a hand-off and a",
          "  cycle cost through one coordinator hop here, so the targets table shows, for each target, whether that",
          "  floor itself meets it.",
          ...(impls.some((i) => i.id === "floor-queued")
            ? [
                "  *Floor lock with Queued answers* is the same server started with `--queued`: it also answers each",
                "  acquire that waits with a Queued message, as Turnstile's protocol does, so the two rows show what",
                "  that one message per waiter costs.",
              ]
            : []),
        ]
      : []),
    `- Each workload size runs ${options.rounds} round(s) of ${options.measureMs / 1000} s (after ${options.warmupMs / 1000} s warm-up) per`,
    "  implementation, implementations interleaved and the order reversed every other round; rounds are pooled.",
    "- Redis commands per cycle: *sent* counts the commands clients (or the coordinator) send over the wire",
    "  (INFO commandstats of EVALSHA/EVAL, plus SET for the SET-NX locks); *incl. in scripts* is the",
    "  total_commands_processed delta, which also counts every `redis.call` inside a Lua script.",
    "- CPU µs per cycle: CPU time of Redis (INFO), of the server process (coordinator or etcd, /proc) and of the",
    "  bench process that runs the clients, over the window, divided by the cycles in it.",
    "",
    "| implementation | how a waiter learns the lock is free | version |",
    "| --- | --- | --- |",
    ...impls.map((i) => `| ${i.label} | ${i.waits} | ${i.version} |`),
    "",
    "## Targets",
    "",
    targetTable(targetRows(results)),
    "",
    ...(results.anatomy ? [anatomySection(results.anatomy), ""] : []),
    "## 1. Hand-off: N contenders on one lock",
    "",
    "After releasing, a contender asks again only once another contender has taken the lock, and a holder",
    "releases only once the previous holder's new request is issued: every release hands the lock to a",
    "contender that was already waiting (*to a waiter* checks this per hand-off). Two disciplines, each with",
    "its own tables: *released at once* releases in the same turn of the event loop as the previous holder's",
    "re-acquire was issued (in a busy fleet the next request often travels with the release: the coordinator",
    "reads both in one read), *released after one turn* waits one more turn (`setImmediate`; Redisson's threads",
    "50 µs), so the re-acquire reaches the wire first. The targets judge each hand-off target on the worse of",
    "the two. *Gap*: from the start of a release to the next holder's acquire resolving, on this",
    "process's clock. Fairness is Jain's index over the contenders' hand-off counts (1 = equal). Redisson's",
    "`RFairLock` is the FIFO row to compare with; `RLock` is not FIFO and is shown apart, as what giving up",
    "FIFO buys. Contenders each in their own process release after the board's message and a turn: their row",
    "is in the after-turn tables only.",
    "",
  ];
  for (const h of results.handOff)
    out.push(
      `### ${h.contenders} contenders, ${DISCIPLINE_TEXT[h.discipline]}`,
      "",
      handOffTable(h.results, impls),
      "",
    );
  out.push(...img("handoff-"), "");
  out.push(
    "## 2. Spread: workers on distinct locks",
    "",
    "Each worker loops acquire → release on a lock of its own (no contention): the cost of an uncontended",
    "lock cycle when many run at once. Acquire latency is from the call to holding the lock.",
    "",
  );
  for (const s of results.spread) out.push(`### ${s.workers} workers`, "", spreadTable(s.results, impls), "");
  out.push(...img("spread-"), "");
  out.push("## 3. Idle fleet", "");
  if (results.fleet) {
    out.push(
      "Sessions that only hold their locks and send a keepalive every TTL/3 (raw protocol streams over",
      `${options.fleet?.connections ?? "?"} client connections). The coordinator renews all of a session's locks with one script per`,
      "keepalive (on one Redis; per hash slot on Redis Cluster), so the Redis work is 3 × sessions / TTL keepalive",
      "messages and scripts per second, with 3 × locks / TTL leases pushed inside them: linear in sessions and",
      "in locks/TTL, nothing per idle second otherwise.",
      "",
      fleetTable(results.fleet),
      "",
      ...img("fleet-"),
      "",
    );
  } else out.push("Not run in this invocation.", "");
  if (options.shapes) out.push(shapesSection(results.scaleOut, m.cores, results.clusterScaleOut), "");
  out.push(limitsSection(results), "");
  if (profile) out.push("### Coordinator CPU profile (this run)", "", profile, "");
  if (notes.length) out.push("## Notes from this run", "", ...notes.map((n) => `- ${n}`), "");
  out.push(
    "## Rerunning",
    "",
    "```sh",
    "sudo apt-get install -y redis-server etcd-server   # etcd is optional: without it that column is skipped",
    "# Java 17 and Maven are optional: without them the Redisson rows are skipped (Maven fetches Redisson)",
    "npm ci",
    "npm run bench                 # full run, about 10–15 minutes; writes BENCHMARKS.md and bench/results/",
    "npm run bench -- --quick      # about 3 minutes",
    "npm run bench -- --help       # sizes, rounds, --only, --discipline, --no-anatomy, --no-shapes, --profile DIR",
    "npx tsx bench/anatomy/main.ts # the anatomy of a hand-off alone (--quick: short; --discipline at-once|after-turn: one)",
    "```",
    "",
  );
  return out.join("\n");
}
