import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { waitForOutput } from "./wait-for-output.js";

// The CLI from source (through tsx), so the tests never run a stale dist/.
const BIN = fileURLToPath(new URL("../../bin/turnstile-cli.ts", import.meta.url));

/** A `turnstile serve` child process, for tests that kill, pause or restart coordinators. */
export interface CoordinatorProcess {
  address: string;
  process: ChildProcess;
  /** SIGKILLs the process (if still running) and waits for it to exit. */
  kill(): Promise<void>;
}

/** Starts `turnstile serve` on a free port against `redisUrl` and resolves once it listens. */
export async function spawnCoordinator(redisUrl: string, extraArgs: string[] = []): Promise<CoordinatorProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", BIN, "serve", "--listen", "127.0.0.1:0", "--redis", redisUrl, ...extraArgs],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const match = await waitForOutput(child, /"port":(\d+)[^\n]*"msg":"listening"/, 15_000);
  return {
    address: `127.0.0.1:${match[1]}`,
    process: child,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  };
}
