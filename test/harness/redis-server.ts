import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";
import { waitForOutput } from "./wait-for-output.js";

/** A redis-server child process on a free loopback port, started and stopped by the tests. */
export interface TestRedis {
  url: string;
  port: number;
  process: ChildProcess;
  /** Stops the server and deletes its data directory. */
  stop(): Promise<void>;
}

/** True when a `redis-server` binary is on PATH. */
export function redisServerAvailable(): boolean {
  return spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
}

/**
 * Starts a fresh redis-server on a free port with its own data directory and resolves once it
 * accepts connections. `appendonly` turns on AOF (fsync always) for restart tests; `args` are
 * more redis-server options (they win over the defaults, e.g. `--port 0 --tls-port N`).
 */
export async function startRedis(
  options: { port?: number; dir?: string; appendonly?: boolean; args?: string[] } = {},
): Promise<TestRedis> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "turnstile-redis-"));
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""];
  args.push("--appendonly", options.appendonly ? "yes" : "no", "--appendfsync", "always", ...(options.args ?? []));
  const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
  await waitForOutput(child, /Ready to accept connections/, 10_000);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await exited;
      }
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
