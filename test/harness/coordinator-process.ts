import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { waitForOutput } from "./wait-for-output.js";

// The CLI from source (through tsx), so the tests never run a stale dist/.
const BIN = fileURLToPath(new URL("../../bin/turnstile-cli.ts", import.meta.url));

/** A `turnstile serve` child process, for tests that kill, pause or restart coordinators. */
export interface CoordinatorProcess {
  address: string;
  /** `http://127.0.0.1:PORT/metrics` when started with `--metrics`. */
  metricsUrl?: string;
  process: ChildProcess;
  /** SIGKILLs the process (if still running) and waits for it to exit. */
  kill(): Promise<void>;
}

/** Starts `turnstile serve` on a free port against `redisUrl` and resolves once it listens. */
export function spawnCoordinator(redisUrl: string, extraArgs: string[] = []): Promise<CoordinatorProcess> {
  return spawnCoordinatorWith(["--redis", redisUrl, ...extraArgs]);
}

/** Starts `turnstile serve` on a free port with the given settings and resolves once it listens. */
export async function spawnCoordinatorWith(args: string[]): Promise<CoordinatorProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", BIN, "serve", "--listen", "127.0.0.1:0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  // "serving metrics" (with its port) is logged before "listening".
  const metrics = args.includes("--metrics") ? /"metricsPort":(\d+)[\s\S]*/.source : "()";
  const match = await waitForOutput(child, new RegExp(`${metrics}"port":(\\d+)[^\\n]*"msg":"listening"`), 15_000);
  return {
    address: `127.0.0.1:${match[2]}`,
    metricsUrl: match[1] ? `http://127.0.0.1:${match[1]}/metrics` : undefined,
    process: child,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  };
}
