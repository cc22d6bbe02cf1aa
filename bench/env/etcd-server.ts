import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../test/harness/free-port.js";
import { waitForOutput } from "../../test/harness/wait-for-output.js";

/** An etcd child process on free loopback ports, with its data directory on tmpfs. */
export interface BenchEtcd {
  address: string;
  version: string;
  dataDir: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** The version of the `etcd` on PATH, or undefined when there is none. */
export function etcdVersion(): string | undefined {
  const out = spawnSync("etcd", ["--version"], { encoding: "utf8" });
  if (out.status !== 0) return undefined;
  return out.stdout.match(/etcd Version: (\S+)/)?.[1] ?? "?";
}

/**
 * Starts a single-member etcd with its data directory under /dev/shm (tmpfs, so its WAL fsyncs
 * cost no disk) and resolves once it serves clients.
 */
export async function startEtcd(): Promise<BenchEtcd> {
  const version = etcdVersion();
  if (!version) throw new Error("etcd is not on PATH");
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "turnstile-bench-etcd-"));
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    "--name=bench",
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=bench=${peer}`,
  ];
  const child = spawn("etcd", args, { stdio: ["ignore", "pipe", "pipe"] });
  await waitForOutput(child, /ready to serve client requests/i, 15_000);
  child.stdout?.resume();
  child.stderr?.resume();
  return {
    address: `127.0.0.1:${clientPort}`,
    version,
    dataDir,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
