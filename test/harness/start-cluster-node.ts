import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";
import type { TestRedis } from "./redis-server.js";
import { waitForOutput } from "./wait-for-output.js";

/**
 * Starts a lone redis-server with cluster support on and no slots assigned: it cannot serve keys,
 * but answers `CLUSTER KEYSLOT`, which a plain redis-server refuses.
 */
export async function startClusterNode(): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "turnstile-cluster-"));
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""];
  args.push("--appendonly", "no", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf");
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
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
