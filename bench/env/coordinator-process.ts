import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { waitForOutput } from "../../test/harness/wait-for-output.js";
import { COMPILED_CLI } from "./compiled-build.js";

/** A `turnstile serve` process for the benchmark; unlike the test harness's, it stops gracefully. */
export interface BenchCoordinator {
  address: string;
  pid: number;
  process: ChildProcess;
  /** SIGTERMs the coordinator (so a --cpu-prof profile is written) and waits for it to exit. */
  stop(): Promise<void>;
}

// The log line each store logs before "listening": a coordinator on the wrong store fails to start.
const STORE_LOG = {
  redis: /"msg":"keeping locks in Redis"/,
  embedded: /"msg":"no Redis configured: using the embedded store/,
};

/**
 * Starts `node dist/bin/turnstile-cli.js serve --redis URL --listen 127.0.0.1:0` — the compiled coordinator,
 * what `npx turnstile serve` and the container run, not the sources through tsx, whose transform adds
 * work per closure (the bench's entry points build it first when a source is newer: ensureCompiled) —
 * and resolves once it listens; with `redisUrl` undefined it starts the same
 * command without `--redis`, on the embedded in-process store (or, with `--redis-cluster` in `extraArgs`, on
 * that Cluster). With `profileDir`, node writes a CPU
 * profile there on exit; `extraArgs` go to `serve` (the TLS row's certificates, the replicated row's replica acks);
 * `launch` adds node options (after `--import tsx`, which they get) and environment variables (the anatomy's mark recorder). Its output is drained
 * so a chatty log can never block it.
 */
export async function startCoordinator(
  redisUrl: string | undefined,
  profileDir?: string,
  extraArgs: string[] = [],
  launch: { nodeArgs?: string[]; env?: Record<string, string> } = {},
): Promise<BenchCoordinator> {
  const nodeArgs = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const storeArgs = redisUrl ? ["--redis", redisUrl] : [];
  if (!existsSync(COMPILED_CLI)) throw new Error(`${COMPILED_CLI} is missing: run \`npm run build\` first`);
  const args = [
    ...nodeArgs,
    // Only what `launch` loads (the anatomy's mark recorder) is TypeScript, and needs tsx.
    ...(launch.nodeArgs ? ["--import", "tsx", ...launch.nodeArgs] : []),
    COMPILED_CLI,
    "serve",
    "--listen",
    "127.0.0.1:0",
    ...storeArgs,
    ...extraArgs,
    "--log-level",
    "info",
  ];
  // Settings come from the flags alone: a TURNSTILE_* variable (TURNSTILE_REDIS, a config file)
  // must neither put the embedded coordinator on Redis nor make the two coordinators differ.
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("TURNSTILE_"))),
    ...launch.env,
  };
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env });
  // A coordinator on a Redis Cluster gets its nodes in `extraArgs` (--redis-cluster).
  const onRedis = redisUrl !== undefined || extraArgs.includes("--redis-cluster");
  const storeLog = STORE_LOG[onRedis ? "redis" : "embedded"].source;
  const listening = new RegExp(`${storeLog}[\\s\\S]*?"port":(\\d+)[^\\n]*"msg":"listening"`);
  const match = await waitForOutput(child, listening, 15_000);
  let tail = "";
  const keepTail = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4000);
  };
  child.stdout?.on("data", keepTail);
  child.stderr?.on("data", keepTail);
  child.once("exit", (code, signal) => {
    if (code !== 0 && signal !== "SIGTERM" && code !== null)
      process.stderr.write(`\ncoordinator exited (${code ?? signal}); last output:\n${tail}\n`);
  });
  return {
    address: `127.0.0.1:${match[1]}`,
    pid: child.pid!,
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
