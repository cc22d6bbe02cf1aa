import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./free-port.js";
import { until } from "./until.js";
import { waitForOutput } from "./wait-for-output.js";

/** A Redis Cluster of masters only, on free loopback ports, started and stopped by the tests. */
export interface TestRedisCluster {
  nodes: { host: string; port: number }[];
  processes: ChildProcess[];
  stop(): Promise<void>;
}

/**
 * Starts `masters` cluster-enabled redis-servers, joins them with `redis-cli --cluster create`
 * (slots split evenly, no replicas) and resolves once every node reports cluster_state:ok.
 */
export async function startRedisCluster(masters = 3): Promise<TestRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), "turnstile-cluster-"));
  const ports: number[] = [];
  const processes: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(processes.map(killAndWait));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freePort();
      const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"];
      args.push("--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`);
      const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
      processes.push(child);
      await waitForOutput(child, /Ready to accept connections/, 10_000);
      ports.push(port);
    }
    const create = spawnSync(
      "redis-cli",
      ["--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-yes"],
      { encoding: "utf8", timeout: 20_000 },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${create.stdout}${create.stderr}`);
    await Promise.all(ports.map((port) => waitForClusterOk(port, 15_000)));
  } catch (err) {
    await stop();
    throw err;
  }
  return { nodes: ports.map((port) => ({ host: "127.0.0.1", port })), processes, stop };
}

async function waitForClusterOk(port: number, timeoutMs: number): Promise<void> {
  const redis = new Redis({ port, host: "127.0.0.1", lazyConnect: true });
  try {
    await redis.connect();
    const ok = async () => /cluster_state:ok/.test(String(await redis.call("CLUSTER", "INFO")));
    await until(ok, `cluster node ${port} to report cluster_state:ok`, timeoutMs, 50);
  } finally {
    redis.disconnect();
  }
}

async function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}
