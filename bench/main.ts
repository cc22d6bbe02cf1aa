import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import type { TlsOptions } from "../client/index.js";
import { redisServerAvailable, startRedis } from "../test/harness/redis-server.js";
import { ensureCompiled } from "./env/compiled-build.js";
import { type BenchCoordinator, startCoordinator } from "./env/coordinator-process.js";
import { type BenchEtcd, etcdVersion, startEtcd } from "./env/etcd-server.js";
import { machineInfo } from "./env/machine-info.js";
import { startMtlsCoordinator } from "./env/mtls-coordinator.js";
import { type ReplicatedRedis, startReplicatedRedis } from "./env/replicated-redis.js";
import { type FloorLockProcess, startFloorLock } from "./floor-lock/floor-lock-process.js";
import { etcdLockImpl } from "./impls/etcd-lock-impl.js";
import { floorLockImpl } from "./impls/floor-lock-impl.js";
import type { LockImpl } from "./impls/lock-impl.js";
import { redisSemaphoreImpl } from "./impls/redis-semaphore-impl.js";
import { redlockImpl } from "./impls/redlock-impl.js";
import { spinLockImpl } from "./impls/spin-lock-impl.js";
import { turnstileImpl } from "./impls/turnstile-impl.js";
import { parseOptions, USAGE, UsageRequested } from "./options.js";
import { Progress } from "./progress.js";
import { writeBenchmarksMd } from "./report/benchmarks-md.js";
import { cpuProfileSummary } from "./report/cpu-profile-summary.js";
import { writePlots } from "./report/plots.js";
import { type BenchResults, runPlan } from "./run-plan.js";

const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * `npm run bench`: starts Redis, a coordinator on Redis, one on the embedded store (when selected)
 * and etcd, runs every workload, writes the report.
 */
async function main(argv: string[]): Promise<number> {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(argv, REPO_ROOT);
  } catch (err) {
    if (err instanceof UsageRequested) {
      process.stdout.write(USAGE);
      return 0;
    }
    process.stderr.write(`bench: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (!redisServerAvailable()) {
    process.stderr.write(
      "bench: redis-server not found on PATH (Debian/Ubuntu: sudo apt-get install -y redis-server)\n",
    );
    return 1;
  }
  const notes: string[] = [];
  // The coordinators run compiled, as users run them: never a dist/ older than its sources.
  if (ensureCompiled() === "built") process.stderr.write("bench: npm run build (dist/ was older than its sources)\n");
  const redis = await startRedis();
  const counter = new Redis(redis.url);
  const coordinator = await startCoordinator(redis.url, options.profileDir);
  const etcdV = etcdVersion();
  let etcd: BenchEtcd | undefined;
  if (etcdV) etcd = await startEtcd();
  else
    notes.push(
      "etcd v3lock was skipped: `etcd` is not on PATH (Debian/Ubuntu: `sudo apt-get install -y etcd-server`).",
    );
  let embedded: BenchCoordinator | undefined;
  let replicated: { redis: ReplicatedRedis; coordinator: BenchCoordinator } | undefined;
  let mtls: { coordinator: BenchCoordinator; tls: TlsOptions } | undefined;
  let fencing: { coordinator: BenchCoordinator; keyDir: string } | undefined;
  let floor: FloorLockProcess | undefined;
  let floorQueued: FloorLockProcess | undefined;
  try {
    if (!options.only.length || options.only.includes("turnstile-replicated")) {
      // Majority of 3 nodes: the master and 1 of its 2 replicas hold every write before it is told.
      const redis = await startReplicatedRedis(2);
      replicated = {
        redis,
        coordinator: await startCoordinator(redis.master.url, undefined, ["--redis-replica-acks", "1"]),
      };
    }
    if (!options.only.length || options.only.includes("turnstile-embedded"))
      embedded = await startCoordinator(undefined, options.profileDir && join(options.profileDir, "embedded"));
    if (!options.only.length || options.only.includes("turnstile-mtls")) mtls = await startMtlsCoordinator(redis.url);
    if (!options.only.length || options.only.includes("turnstile-fencing")) {
      const keyDir = mkdtempSync(join(tmpdir(), "turnstile-bench-fencing-"));
      const keyFile = join(keyDir, "fencing.pem");
      writeFileSync(keyFile, generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }));
      fencing = { keyDir, coordinator: await startCoordinator(redis.url, undefined, ["--fencing-key", keyFile]) };
    }
    if (!options.only.length || options.only.includes("floor")) floor = await startFloorLock(redis.url);
    if (!options.only.length || options.only.includes("floor-queued"))
      floorQueued = await startFloorLock(redis.url, true);
    const machine = await machineInfo(counter, etcdV);
    const all: LockImpl[] = [
      turnstileImpl(coordinator.address),
      ...(replicated ? [turnstileImpl(replicated.coordinator.address, "replicated")] : []),
      ...(embedded ? [turnstileImpl(embedded.address, "embedded")] : []),
      ...(mtls ? [turnstileImpl(mtls.coordinator.address, "mtls", mtls.tls)] : []),
      ...(fencing ? [turnstileImpl(fencing.coordinator.address, "fencing")] : []),
      ...(floor ? [floorLockImpl(floor.address)] : []),
      ...(floorQueued ? [floorLockImpl(floorQueued.address, true)] : []),
      spinLockImpl(redis.url),
      redisSemaphoreImpl(redis.url),
      redlockImpl(redis.url),
      ...(etcd ? [etcdLockImpl(etcd.address, etcd.version)] : []),
    ];
    const impls = options.only.length ? all.filter((i) => options.only.includes(i.id)) : all;
    if (impls.length === 0) throw new Error(`--only ${options.only.join(",")}: no such implementation`);
    const serverPids: Record<string, number | undefined> = {
      turnstile: coordinator.pid,
      "turnstile-embedded": embedded?.pid,
      "turnstile-replicated": replicated?.coordinator.pid,
      "turnstile-mtls": mtls?.coordinator.pid,
      "turnstile-fencing": fencing?.coordinator.pid,
      floor: floor?.pid,
      "floor-queued": floorQueued?.pid,
      etcd: etcd?.process.pid,
    };
    const progress = new Progress(0);
    progress.note(`bench: Redis ${redis.url}, coordinator ${coordinator.address} (pid ${coordinator.pid})`);
    if (embedded) progress.note(`bench: embedded-store coordinator ${embedded.address} (pid ${embedded.pid})`);
    progress.note(`bench: etcd ${etcd ? `${etcd.address} (data in ${etcd.dataDir})` : "not on PATH: skipped"}`);
    const results: BenchResults = await runPlan({
      options,
      impls,
      redis: counter,
      redisUrl: redis.url,
      serverPids,
      coordinator,
      notes,
    });
    machine.loadEnd = loadavg()[0];
    // Stopped, so that their --cpu-prof profiles are written.
    await coordinator.stop();
    await embedded?.stop();
    const profileDir = options.profileDir;
    const profile = profileDir && cpuProfileSummary(profileDir, embedded && join(profileDir, "embedded"));
    const resultsDir = join(options.outDir, "bench", "results");
    mkdirSync(resultsDir, { recursive: true });
    const reported = [...impls, ...(results.extraImpls ?? [])];
    const plots = writePlots(results, reported, resultsDir);
    const md = writeBenchmarksMd({ options, machine, impls: reported, results, plots, notes, profile });
    writeFileSync(join(options.outDir, "BENCHMARKS.md"), md);
    writeFileSync(join(resultsDir, "results.json"), `${JSON.stringify(summaryJson(results, machine), null, 2)}\n`);
    progress.note(`bench: wrote ${join(options.outDir, "BENCHMARKS.md")} and ${plots.length} plots in ${resultsDir}`);
    return 0;
  } finally {
    counter.disconnect();
    await coordinator.stop();
    await embedded?.stop();
    await replicated?.coordinator.stop();
    await replicated?.redis.stop();
    await mtls?.coordinator.stop();
    await fencing?.coordinator.stop();
    if (fencing) rmSync(fencing.keyDir, { recursive: true, force: true });
    await floor?.stop();
    await floorQueued?.stop();
    await etcd?.stop();
    await redis.stop();
  }
}

/** The results without raw samples, for diffing runs. */
function summaryJson(results: BenchResults, machine: unknown): unknown {
  return JSON.parse(
    JSON.stringify({ machine, ...results }, (key, value) => {
      if (key === "gapsMs" || key === "acquireMs" || key === "rttMs") return undefined;
      if (value instanceof Map) return Object.fromEntries(value);
      return value;
    }),
  );
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`\nbench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
