// npx tsx bench/coordinator-syscalls.ts [at-once|after-turn|spread] [redis|embedded] [--fencing-key]: the
// system calls and CPU time of the coordinator per hand-off (8 contenders, in the discipline named) or per
// uncontended cycle (spread, 16 workers). It starts its own redis-server and a compiled coordinator process
// (on that Redis, or on the embedded store; with --fencing-key, signing a proof into every grant with an
// Ed25519 key made for the run, as the bench's fencing row does), runs the bench's workload (1 s warm-up,
// 3 s window) and counts the coordinator's system calls over the window with `perf stat` (Linux perf,
// tracepoints readable: run as root or with kernel.perf_event_paranoid ≤ 1). Counts are what the
// coordinator asked the kernel for, so they hold across runs where timings do not (docs/architecture.md,
// Releases first).
import { spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { startRedis } from "../test/harness/redis-server.js";
import { ensureCompiled } from "./env/compiled-build.js";
import { startCoordinator } from "./env/coordinator-process.js";
import { turnstileImpl } from "./impls/turnstile-impl.js";
import { type Discipline, runHandOff } from "./workloads/hand-off.js";
import { runSpread } from "./workloads/spread.js";

const WARMUP_MS = 1000;
const MEASURE_MS = 3000;
/** What perf counts, in the order printed: every system call, then the ones a hop is made of. */
const EVENTS = [
  "raw_syscalls:sys_enter",
  "syscalls:sys_enter_write",
  "syscalls:sys_enter_writev",
  "syscalls:sys_enter_read",
  "syscalls:sys_enter_epoll_pwait",
  "syscalls:sys_enter_futex",
  "context-switches",
  "task-clock",
];

/** Counts EVENTS on process `pid` for `ms`; resolves with perf's CSV lines (value,unit,event,…). */
function perfStat(pid: number, ms: number): Promise<string> {
  const perf = spawn("perf", [
    "stat",
    "-x",
    ",",
    "-e",
    EVENTS.join(","),
    "-p",
    String(pid),
    "--",
    "sleep",
    `${ms / 1000}`,
  ]);
  let out = "";
  perf.stderr.on("data", (chunk) => {
    out += chunk;
  });
  return new Promise((resolve, reject) => {
    perf.once("error", (err) => reject(new Error(`perf could not start (${err.message}): apt-get install linux-perf`)));
    perf.once("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`perf stat exited with ${code}: ${out.trim()}`)),
    );
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const fencing = args.includes("--fencing-key");
  const [mode = "at-once", store = "redis"] = args.filter((a) => a !== "--fencing-key");
  if (!["at-once", "after-turn", "spread"].includes(mode) || !["redis", "embedded"].includes(store)) {
    throw new Error(
      "usage: npx tsx bench/coordinator-syscalls.ts [at-once|after-turn|spread] [redis|embedded] [--fencing-key]",
    );
  }
  ensureCompiled();
  const keyDir = fencing ? mkdtempSync(join(tmpdir(), "turnstile-syscalls-")) : undefined;
  const flags: string[] = [];
  if (keyDir) {
    const keyFile = join(keyDir, "fencing.pem");
    writeFileSync(keyFile, generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }));
    flags.push("--fencing-key", keyFile);
  }
  const redis = await startRedis();
  const counter = new Redis(redis.url);
  const coordinator = await startCoordinator(store === "redis" ? redis.url : undefined, undefined, flags);
  try {
    const impl = turnstileImpl(coordinator.address, fencing ? "fencing" : undefined);
    const common = {
      warmupMs: WARMUP_MS,
      measureMs: MEASURE_MS,
      sources: { redis: counter, serverPid: coordinator.pid },
      progress: () => {},
    };
    let counted!: Promise<string>;
    const window = setTimeout(() => {
      counted = perfStat(coordinator.pid, MEASURE_MS);
    }, WARMUP_MS);
    let ops: number;
    let line: string;
    try {
      if (mode === "spread") {
        const r = await runSpread(impl, { ...common, workers: 16 });
        ops = r.cycles;
        line = `spread, 16 workers: ${r.cyclesPerS.toFixed(0)} cycles/s, acquire mean ${r.acquire.meanMs.toFixed(3)} ms`;
      } else {
        const r = await runHandOff(impl, { ...common, contenders: 8, discipline: mode as Discipline });
        ops = r.handOffs;
        line = `hand-off, 8 contenders, ${mode}: ${r.handOffsPerS.toFixed(0)} hand-offs/s, gap mean ${r.gap.meanMs.toFixed(3)} ms`;
      }
    } finally {
      clearTimeout(window);
    }
    const csv = await counted;
    const on = store === "redis" ? "Redis" : "the embedded store";
    process.stdout.write(`${line} (coordinator on ${on}${fencing ? ", signing fencing proofs" : ""})\n`);
    const per = mode === "spread" ? "per cycle" : "per hand-off";
    for (const row of csv.trim().split("\n")) {
      const [value, , event] = row.split(",");
      if (!event || !EVENTS.includes(event)) continue;
      const each = Number(value) / ops;
      const shown = event === "task-clock" ? `${(each * 1000).toFixed(0)} µs CPU` : each.toFixed(2);
      process.stdout.write(`  ${event.padEnd(32)} ${shown} ${per}\n`);
    }
  } finally {
    await counter.quit();
    await coordinator.stop();
    await redis.stop();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`coordinator-syscalls: ${err.message}\n`);
    process.exit(1);
  },
);
