import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./free-port.js";
import { startRedis, type TestRedis } from "./redis-server.js";
import { notYetOnError, until } from "./until.js";
import { waitForOutput } from "./wait-for-output.js";

/** How long a Sentinel step may take before a test gives up (failovers take seconds). */
const SENTINEL_WAIT_MS = 15_000;

/** A master, its replica and one Sentinel (quorum 1) on free loopback ports. */
export interface TestSentinel {
  masterName: string;
  sentinels: { host: string; port: number }[];
  master: TestRedis;
  replica: TestRedis;
  /**
   * Waits until the replica has every write so far (WAIT 1), then asks the Sentinel for a failover
   * and resolves once the replica is the master it names.
   */
  failover(): Promise<void>;
  stop(): Promise<void>;
}

const MASTER_NAME = "turnstile-test";

/**
 * Starts a master, a replica of it, and a Sentinel monitoring the master (`redis-server
 * --sentinel`), and resolves once the Sentinel knows the replica, so a failover can pick it.
 */
export async function startRedisSentinel(): Promise<TestSentinel> {
  // Without the delay (5 s by default) a replica waits that long for its first full sync.
  const noDelay = ["--repl-diskless-sync-delay", "0"];
  const master = await startRedis({ args: noDelay });
  const replica = await startRedis({ args: [...noDelay, "--replicaof", "127.0.0.1", String(master.port)] });
  const dir = mkdtempSync(join(tmpdir(), "turnstile-sentinel-"));
  const port = await freePort();
  const conf = join(dir, "sentinel.conf");
  writeFileSync(
    conf,
    [
      `port ${port}`,
      "bind 127.0.0.1",
      `dir ${dir}`,
      `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${master.port} 1`,
      `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
      `sentinel failover-timeout ${MASTER_NAME} 10000`,
      "",
    ].join("\n"),
  );
  const sentinel: ChildProcess = spawn("redis-server", [conf, "--sentinel"], { stdio: ["ignore", "pipe", "pipe"] });
  const admin = new Redis({ port, host: "127.0.0.1", lazyConnect: true });
  const replicaAdmin = new Redis(replica.url);
  const stop = async () => {
    admin.disconnect();
    replicaAdmin.disconnect();
    await killAndWait(sentinel);
    await Promise.all([master.stop(), replica.stop()]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForOutput(sentinel, /\+monitor master/, 10_000);
    await admin.connect();
    await until(
      async () => /master_link_status:up/.test(await replicaAdmin.info("replication")),
      "the replica to sync",
      SENTINEL_WAIT_MS,
      50,
    );
    await until(
      async () => {
        const replicas = (await admin.call("SENTINEL", "REPLICAS", MASTER_NAME)) as string[][];
        return replicas.some((r) => fieldOf(r, "port") === String(replica.port) && fieldOf(r, "flags") === "slave");
      },
      "the Sentinel to know the replica",
      SENTINEL_WAIT_MS,
      50,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    masterName: MASTER_NAME,
    sentinels: [{ host: "127.0.0.1", port }],
    master,
    replica,
    async failover() {
      const current = new Redis(master.url);
      await current.wait(1, 10_000).finally(() => current.disconnect());
      // Refused (NOGOODSLAVE) until the Sentinel has fresh INFO from the replica: retry.
      await until(
        notYetOnError(() => admin.call("SENTINEL", "FAILOVER", MASTER_NAME).then(() => true)),
        "SENTINEL FAILOVER to be accepted",
        SENTINEL_WAIT_MS,
        50,
      );
      await until(
        async () => {
          const [, masterPort] = (await admin.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)) as string[];
          return masterPort === String(replica.port);
        },
        "the replica to become the master",
        SENTINEL_WAIT_MS,
        50,
      );
    },
    stop,
  };
}

function fieldOf(flat: string[], name: string): string | undefined {
  const i = flat.indexOf(name);
  return i >= 0 ? flat[i + 1] : undefined;
}

async function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}
