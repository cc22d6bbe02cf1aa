import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { waitForOutput } from "../../test/harness/wait-for-output.js";

const SERVER = fileURLToPath(new URL("./floor-lock-server.ts", import.meta.url));

/** A running floor lock server. */
export interface FloorLockProcess {
  address: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * Starts the floor lock server (floor-lock-server.ts) on `redisUrl` in its own process; with `queued` it
 * answers each waiting acquire with Queued, as Turnstile does.
 */
export async function startFloorLock(redisUrl: string, queued = false): Promise<FloorLockProcess> {
  const args = ["--import", "tsx", SERVER, redisUrl, ...(queued ? ["--queued"] : [])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    const port = (await waitForOutput(child, /listening (\d+)/, 15_000))[1];
    return {
      address: `127.0.0.1:${port}`,
      pid: child.pid,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
        await exited;
      },
    };
  } catch (err) {
    child.kill("SIGKILL");
    await exited;
    throw err;
  }
}
