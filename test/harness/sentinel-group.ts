import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./free-port.js";
import type { NetworkProxy, PartitionNetwork } from "./partition-network.js";
import { startRedis, type TestRedis } from "./redis-server.js";
import { notYetOnError, until } from "./until.js";
import { waitForOutput } from "./wait-for-output.js";

/** Timings of the group's Sentinels. */
export interface SentinelTimings {
  downAfterMs: number;
  failoverTimeoutMs: number;
}

/**
 * A master, its replicas and a quorum of Sentinels on free loopback ports, for failover fault
 * tests: `killMaster` SIGKILLs whichever node is the master now and restarts it as a replica of the
 * one the Sentinels promote; `failover` asks for a Sentinel-driven failover.
 */
export interface SentinelGroup {
  masterName: string;
  sentinels: { host: string; port: number }[];
  /** `turnstile serve` flags for this group, with majority-acknowledged writes. */
  serveArgs(): string[];
  /** The port of the master the Sentinels name now. */
  masterPort(): Promise<number>;
  /** Resolves once the master has every replica online (synced) and the Sentinels see them. */
  settled(): Promise<void>;
  /**
   * SIGKILLs the master, waits for the Sentinels to name another, restarts the dead node as its
   * replica; `promotedAt` (process.hrtime.bigint()) is when every Sentinel named the new master.
   */
  killMaster(): Promise<{ killed: number; promoted: number; promotedAt: bigint }>;
  /** Waits until every Sentinel names a master other than `old`, and returns its port. */
  promotedFrom(old: number): Promise<number>;
  /** SENTINEL FAILOVER (retried until accepted), resolved once another node is the master. */
  failover(): Promise<{ from: number; to: number; promotedAt: bigint }>;
  /**
   * SIGSTOPs the master (a VM pause, a stalled process) until the Sentinels name another, then
   * SIGCONTs it: it wakes up as a master, and the Sentinels demote it into a replica of the new one.
   */
  freezeMaster(): Promise<{ frozen: number; promoted: number; promotedAt: bigint }>;
  /** With a `network`: the proxies every connection to a node or Sentinel goes through. */
  links?: SentinelGroupLinks;
  stop(): Promise<void>;
}

/**
 * The links of a group started on a `network`: each redis-server announces (`replica-announce-port`)
 * and is monitored at a proxy's port, so the master address the Sentinels hand out, the replicas'
 * `replicaof` and every client's connection go through it; each Sentinel announces (`sentinel
 * announce-port`) a proxy of its own, which the other Sentinels use and the coordinators are given.
 * Cutting a process's connections at a proxy cuts that link.
 */
export interface SentinelGroupLinks {
  /** The proxy of the node announced at `port` (a port the Sentinels name). */
  nodeProxy(port: number): NetworkProxy;
  /** The process id of the node announced at `port` now. */
  nodePid(port: number): number;
  /** The Sentinels' proxies ("host:port" to give the coordinators), in the order of `sentinelPids`. */
  sentinelProxies: NetworkProxy[];
  sentinelPids: number[];
}

/** Options of a Sentinel group. */
export interface SentinelGroupOptions {
  /** Put a proxy of this network in front of every node and Sentinel (see SentinelGroupLinks). */
  network?: PartitionNetwork;
}

const MASTER_NAME = "turnstile-failover";
const NO_DELAY = ["--repl-diskless-sync-delay", "0", "--repl-diskless-sync", "yes"];

/** Starts 1 master, `replicas` replicas and `sentinels` Sentinels (quorum: a majority of them). */
export async function startSentinelGroup(
  replicas: number,
  sentinelCount: number,
  timings: SentinelTimings,
  options: SentinelGroupOptions = {},
): Promise<SentinelGroup> {
  // Nodes by the port the Sentinels know them at: their own, or their proxy's.
  const nodes = new Map<number, TestRedis>();
  const proxies = new Map<number, { proxy: NetworkProxy; port: number }>();
  const network = options.network;
  /** Starts a node (on `port` when given) known as `announced` (default: its own port). */
  const startNode = async (args: string[], known?: number) => {
    let announce: string[] = [];
    let port: number | undefined;
    let announced = known;
    if (network) {
      port = known === undefined ? await freePort() : proxies.get(known)?.port;
      if (announced === undefined) {
        const proxy = await network.proxy(`127.0.0.1:${port}`);
        announced = proxy.port;
        proxies.set(announced, { proxy, port: port as number });
      }
      announce = ["--replica-announce-ip", "127.0.0.1", "--replica-announce-port", String(announced)];
    } else port = known;
    const node = await startRedis({ port, args: [...NO_DELAY, ...announce, ...args] });
    nodes.set(announced ?? node.port, node);
    return announced ?? node.port;
  };
  const firstPort = await startNode([]);
  for (let i = 0; i < replicas; i++) await startNode(["--replicaof", "127.0.0.1", String(firstPort)]);
  const dir = mkdtempSync(join(tmpdir(), "turnstile-sentinels-"));
  const sentinels: { host: string; port: number; process: ChildProcess; admin: Redis }[] = [];
  const sentinelProxies: NetworkProxy[] = [];
  const quorum = Math.floor(sentinelCount / 2) + 1;
  for (let i = 0; i < sentinelCount; i++) {
    const port = await freePort();
    const announce: string[] = [];
    if (network) {
      const proxy = await network.proxy(`127.0.0.1:${port}`);
      sentinelProxies.push(proxy);
      announce.push("sentinel announce-ip 127.0.0.1", `sentinel announce-port ${proxy.port}`);
    }
    const conf = join(dir, `sentinel-${i}.conf`);
    writeFileSync(
      conf,
      [
        `port ${port}`,
        "bind 127.0.0.1",
        `dir ${dir}`,
        ...announce,
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${firstPort} ${quorum}`,
        `sentinel down-after-milliseconds ${MASTER_NAME} ${timings.downAfterMs}`,
        `sentinel failover-timeout ${MASTER_NAME} ${timings.failoverTimeoutMs}`,
        "",
      ].join("\n"),
    );
    const child = spawn("redis-server", [conf, "--sentinel"], { stdio: ["ignore", "pipe", "pipe"] });
    await waitForOutput(child, /\+monitor master/, 10_000);
    sentinels.push({ host: "127.0.0.1", port, process: child, admin: new Redis({ port, host: "127.0.0.1" }) });
  }
  const admin = sentinels[0].admin;
  const masterPort = async () => {
    const [, port] = (await admin.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)) as string[];
    return Number(port);
  };
  /** Waits until every Sentinel names a master other than `old`, and returns its port. */
  const promotedFrom = async (old: number) => {
    let port = old;
    await until(
      notYetOnError(async () => {
        const ports = await Promise.all(
          sentinels.map(async (s) => {
            const [, p] = (await s.admin.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)) as string[];
            return Number(p);
          }),
        );
        port = ports[0];
        return ports.every((p) => p === port && p !== old);
      }),
      `the Sentinels to promote a replica of ${old}`,
      60_000,
      50,
    );
    return port;
  };
  const settled = async () => {
    await until(
      notYetOnError(async () => {
        const port = await masterPort();
        const master = new Redis({ port, host: "127.0.0.1", lazyConnect: true });
        master.on("error", () => {});
        try {
          await master.connect();
          const info = await master.info("replication");
          const online = info.match(/^slave\d+:.*state=online/gm)?.length ?? 0;
          return /role:master/.test(info) && online === replicas;
        } catch {
          return false;
        } finally {
          master.disconnect();
        }
      }),
      "every replica to be online",
      60_000,
      50,
    );
  };
  const stop = async () => {
    for (const s of sentinels) {
      s.admin.disconnect();
      if (s.process.exitCode === null && s.process.signalCode === null) {
        const exited = new Promise((resolve) => s.process.once("exit", resolve));
        s.process.kill("SIGKILL");
        await exited;
      }
    }
    await Promise.all([...nodes.values()].map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await settled();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    masterName: MASTER_NAME,
    sentinels: sentinels.map(({ host, port }) => ({ host, port })),
    serveArgs: () => [
      "--redis-sentinel",
      sentinels.map((s) => `${s.host}:${s.port}`).join(","),
      "--redis-master",
      MASTER_NAME,
      "--redis-replica-acks",
      "majority",
    ],
    masterPort,
    settled,
    promotedFrom,
    async killMaster() {
      const killed = await masterPort();
      const node = nodes.get(killed);
      if (!node) throw new Error(`no node on port ${killed}`);
      await node.stop();
      const promoted = await promotedFrom(killed);
      const promotedAt = process.hrtime.bigint();
      await startNode(["--replicaof", "127.0.0.1", String(promoted)], killed);
      return { killed, promoted, promotedAt };
    },
    async failover() {
      const from = await masterPort();
      // Refused (INPROG, NOGOODSLAVE) while a failover runs or the replicas' INFO is stale: retry.
      await until(
        notYetOnError(() => admin.call("SENTINEL", "FAILOVER", MASTER_NAME).then(() => true)),
        "SENTINEL FAILOVER to be accepted",
        60_000,
        50,
      );
      const to = await promotedFrom(from);
      return { from, to, promotedAt: process.hrtime.bigint() };
    },
    async freezeMaster() {
      const frozen = await masterPort();
      const node = nodes.get(frozen);
      if (!node) throw new Error(`no node on port ${frozen}`);
      node.process.kill("SIGSTOP");
      try {
        const promoted = await promotedFrom(frozen);
        return { frozen, promoted, promotedAt: process.hrtime.bigint() };
      } finally {
        node.process.kill("SIGCONT");
      }
    },
    links: network
      ? {
          nodeProxy(port) {
            const p = proxies.get(port);
            if (!p) throw new Error(`no proxy announced at ${port}`);
            return p.proxy;
          },
          nodePid(port) {
            const pid = nodes.get(port)?.process.pid;
            if (pid === undefined) throw new Error(`no node announced at ${port}`);
            return pid;
          },
          sentinelProxies,
          sentinelPids: sentinels.map((s) => s.process.pid as number),
        }
      : undefined,
    stop,
  };
}
