import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { Redis } from "ioredis";
import { checkFailoverLog } from "../harness/check-failover-log.js";
import type { CoordinatorProcess } from "../harness/coordinator-process.js";
import {
  type FailoverWorkers,
  spawnLoggedCoordinators,
  startFailoverWorkers,
  writeEventLog,
} from "../harness/failover-fleet.js";
import { type NetworkCut, type NetworkProxy, PartitionNetwork } from "../harness/partition-network.js";
import { type SentinelGroup, type SentinelGroupLinks, startSentinelGroup } from "../harness/sentinel-group.js";

// Each kind of partition this many times (interleaved); `TURNSTILE_PARTITIONS=N` for more.
const EACH = Number(process.env.TURNSTILE_PARTITIONS ?? 2);
const TIMINGS = { downAfterMs: 3000, failoverTimeoutMs: 2000 };
// Longer than detection plus failover, so holders keep their locks across one.
const TTL_MS = 15_000;
// Each acquire waits this long; the checker fails one that ends more than LATE_MS past it.
const WAIT_MS = 10_000;
const LATE_MS = 2000;
// After a partition that ends in a failover: locking resumes within this of the Sentinels naming the
// new master, as after a kill -9 or a freeze (sentinel-failover.test.ts).
const RESUME_MS = 1500;
// A coordinator that hears no Sentinel stops telling grants (health NOT_SERVING) within 1.5 s of the
// cut (a PING every 500 ms, 1 s to answer); the test allows 2 s on a loaded machine.
const STOPS_MS = 2000;
const LOCKS = ["pt/a", "pt/b", "pt/c"];
const SEMAPHORE = { name: "pt/sem", limit: 2 };

/** The kinds of partition, each a link cut and restored while 6 clients lock through 2 coordinators. */
const KINDS = [
  // Every connection to the master (coordinators, Sentinels, replicas) until the Sentinels name another.
  "master cut off",
  // One coordinator's connections to the master, 1 or 4 s (the command timeout is 2 s); no failover.
  "coordinator ↔ master",
  // Every client's connections to one coordinator, 3 or 9 s (HTTP/2 keepalive notices a dead link in 5–8 s).
  "client ↔ coordinator",
  // One coordinator's connections to every Sentinel, 3 s: hearing none, it must stop within STOPS_MS.
  "coordinator ↔ Sentinels",
  // One Sentinel from the other two (both ways) while the master is killed: the other two fail over.
  "Sentinel ↔ Sentinels",
  // One replica's link to the master, one direction (its stream, or its acks), while the master is killed.
  "replica link",
] as const;
type Kind = (typeof KINDS)[number];

describe("partitions: a Sentinel group and 2 coordinators behind TCP proxies; links cut and restored under load", function () {
  this.timeout(15 * 60_000);
  let group: SentinelGroup;
  let links: SentinelGroupLinks;
  let coordinators: CoordinatorProcess[] = [];
  let network: PartitionNetwork;
  let clientProxies: NetworkProxy[] = [];
  let workers: FailoverWorkers | undefined;
  const logDir = mkdtempSync(join(tmpdir(), "turnstile-partitions-"));

  before(async () => {
    // Every link goes through this network's proxies, in a process of their own.
    network = await PartitionNetwork.start();
    group = await startSentinelGroup(2, 3, TIMINGS, { network });
    links = group.links as SentinelGroupLinks;
    const sentinels = links.sentinelProxies.map((p) => p.address).join(",");
    const store = [
      "--redis-sentinel",
      sentinels,
      "--redis-master",
      group.masterName,
      "--redis-replica-acks",
      "majority",
    ];
    coordinators = await spawnLoggedCoordinators(2, store, logDir);
    clientProxies = await Promise.all(coordinators.map((c) => network.proxy(c.address)));
  });

  after(async () => {
    for (const child of workers?.children ?? []) child.kill("SIGKILL");
    await Promise.all(coordinators.map((c) => c.kill()));
    await group?.stop();
    await network?.stop();
  });

  it(`keeps exclusion, fencing order and the semaphore limit through ${EACH} partitions of each kind: ${KINDS.join(", ")}`, async () => {
    const specs = [...LOCKS.map((n) => `lock:${n}`), `semaphore:${SEMAPHORE.name}:${SEMAPHORE.limit}`];
    // The clients reach the coordinators through their proxies only.
    workers = startFailoverWorkers(
      6,
      clientProxies.map((p) => p.address),
      TTL_MS,
      specs,
      SEMAPHORE.name,
      WAIT_MS,
    );
    const { events } = workers;

    const grantsAfter = (at: bigint) => events.filter((e) => e.ev === "grant" && BigInt(e.at) > at).length;
    const waitForGrants = async (at: bigint, what: string) => {
      const giveUpAt = Date.now() + 60_000;
      while (grantsAfter(at) < 5) {
        if (Date.now() > giveUpAt) {
          const tail = events.filter((e) => BigInt(e.at) > at).slice(-30);
          throw new Error(`no locking after ${what} (coordinator logs in ${logDir}): tail ${JSON.stringify(tail)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    // A partition hits a group where locking flows: a grant within the last second, no acquire waiting longer.
    const flowing = async () => {
      const giveUpAt = Date.now() + 60_000;
      for (;;) {
        const recent = process.hrtime.bigint() - 1_000_000_000n;
        const last = new Map(events.map((e) => [e.worker, e]));
        const waitingLong = [...last.values()].some((e) => e.ev === "start" && BigInt(e.at) < recent);
        if (!waitingLong && events.some((e) => e.ev === "grant" && BigInt(e.at) > recent)) return;
        if (Date.now() > giveUpAt) throw new Error(`locking stalled for 60 s between partitions (logs in ${logDir})`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    /** Holds `cuts` while `during` runs, then restores them all. */
    const holding = async <T>(cuts: Promise<NetworkCut>[], during: () => Promise<T>): Promise<T> => {
      const inPlace = await Promise.all(cuts);
      try {
        return await during();
      } finally {
        await Promise.all(inPlace.map((cut) => cut.restore()));
      }
    };

    // `wallMs` (Date.now()) lines the faults up with the coordinators' log times.
    const faults: {
      kind: Kind;
      detail: string;
      at: bigint;
      wallMs: number;
      promotedAt?: bigint;
      promotedWallMs?: number;
      /** The coordinator cut off, for a cut of one coordinator from the Sentinels. */
      coordinator?: number;
    }[] = [];
    const inject = async (
      kind: Kind,
      n: number,
    ): Promise<{ detail: string; promotedAt?: bigint; coordinator?: number }> => {
      const master = await group.masterPort();
      const proxy = links.nodeProxy(master);
      if (kind === "master cut off") {
        const promotedAt = await holding([proxy.cut("all")], async () => {
          await group.promotedFrom(master);
          return process.hrtime.bigint();
        });
        return { detail: `node ${master}`, promotedAt };
      }
      if (kind === "coordinator ↔ master") {
        const ms = n % 2 ? 4000 : 1000;
        await holding([proxy.cut([coordinators[n % 2].process.pid as number])], () => sleep(ms));
        return { detail: `coordinator ${n % 2}, ${ms} ms` };
      }
      if (kind === "client ↔ coordinator") {
        const ms = n % 2 ? 9000 : 3000;
        await holding([clientProxies[n % 2].cut("all")], () => sleep(ms));
        return { detail: `coordinator ${n % 2}, ${ms} ms` };
      }
      if (kind === "coordinator ↔ Sentinels") {
        const pid = coordinators[n % 2].process.pid as number;
        await holding(
          links.sentinelProxies.map((p) => p.cut([pid])),
          () => sleep(3000),
        );
        return { detail: `coordinator ${n % 2}, 3000 ms`, coordinator: n % 2 };
      }
      if (kind === "Sentinel ↔ Sentinels") {
        const j = n % links.sentinelPids.length;
        const others = links.sentinelPids.filter((_p, i) => i !== j);
        const cuts = links.sentinelProxies.map((p, i) => (i === j ? p.cut(others) : p.cut([links.sentinelPids[j]])));
        const { promotedAt } = await holding(cuts, () => group.killMaster());
        return { detail: `Sentinel ${j}, master ${master} killed`, promotedAt };
      }
      // A replica of the current master; alternately its stream and its acknowledgements stop.
      const direction = n % 2 ? "to-target" : "from-target";
      const replicaPid = links.nodePid(await replicaOf(group, master));
      const { promotedAt } = await holding([proxy.cut([replicaPid], direction)], async () => {
        // Writes go on meanwhile, reaching the other replica only (or only its acknowledgements do).
        await sleep(1000);
        return group.killMaster();
      });
      return {
        detail: `${direction === "from-target" ? "stream to" : "acks from"} a replica, master killed`,
        promotedAt,
      };
    };

    await waitForGrants(0n, "the start");
    const mix = KINDS.flatMap((kind) =>
      Array.from({ length: EACH }, (_v, i) => ({ kind, i: i / EACH + KINDS.indexOf(kind) / 100 })),
    )
      .sort((a, b) => a.i - b.i)
      .map((f) => f.kind);
    const counts = new Map<Kind, number>();
    for (const kind of mix) {
      await group.settled();
      // A Sentinel starts no new failover of a master within twice the failover timeout of its last one.
      if (faults.at(-1)?.promotedAt) await sleep(2 * TIMINGS.failoverTimeoutMs);
      await waitForGrants(faults.at(-1)?.promotedAt ?? faults.at(-1)?.at ?? 0n, "the last partition");
      await flowing();
      const n = counts.get(kind) ?? 0;
      counts.set(kind, n + 1);
      const [at, wallMs] = [process.hrtime.bigint(), Date.now()];
      const { detail, promotedAt, coordinator } = await inject(kind, n);
      const promotedWallMs = promotedAt === undefined ? undefined : wallMs + Number((promotedAt - at) / 1_000_000n);
      faults.push({ kind, detail, at, wallMs, promotedAt, promotedWallMs, coordinator });
    }
    const last = faults.at(-1);
    await waitForGrants(last?.promotedAt ?? last?.at ?? 0n, "the last partition");
    await workers.stop();

    writeEventLog(logDir, faults, events);
    const report = checkFailoverLog(events, new Map([[SEMAPHORE.name, SEMAPHORE.limit]]), { lateMs: LATE_MS });
    const ms = (ns: bigint) => Number(ns / 1_000_000n);
    const resumes = faults.map((f) => {
      if (f.promotedAt === undefined) return undefined;
      const first = events.find((e) => e.ev === "grant" && BigInt(e.at) > (f.promotedAt as bigint));
      return first ? ms(BigInt(first.at) - f.promotedAt) : -1;
    });
    // When each coordinator cut off from the Sentinels logged that it stopped (its health went NOT_SERVING).
    const stops = faults
      .filter((f) => f.kind === "coordinator ↔ Sentinels")
      .map((f) => {
        const log = readFileSync(join(logDir, `coordinator-${f.coordinator}.log`), "utf8");
        const times = [...log.matchAll(/"time":(\d+),[^\n]*store \(Redis\) unreachable/g)].map((m) => Number(m[1]));
        const first = times.find((t) => t >= f.wallMs);
        return first === undefined ? -1 : first - f.wallMs;
      });
    const resumesOf = (kind: Kind) =>
      resumes.filter((r, i) => faults[i].kind === kind && r !== undefined).sort((x, y) => (x ?? 0) - (y ?? 0));
    console.log(
      `      partitions: ${KINDS.map((k) => `${faults.filter((f) => f.kind === k).length} ${k}`).join(", ")} ` +
        `(${faults.length} in all: ${faults.map((f) => `${f.kind} [${f.detail}]`).join("; ")}); ` +
        `checked ${report.acquires} acquires (${report.grants} granted, ` +
        `failed: ${JSON.stringify(Object.fromEntries(report.failures))}), ${report.lost} holds lost; ` +
        `grants by name ${JSON.stringify(Object.fromEntries(report.grantsByName))}; ` +
        `0 strict overlaps, no token twice, tokens increasing, semaphore <= ${SEMAPHORE.limit}, every acquire ended, ` +
        `the latest ${report.mostPastWaitMs} ms past its wait of ${WAIT_MS} ms (at most ${LATE_MS}); ` +
        `a coordinator cut off from every Sentinel stopped ${stops.join(", ")} ms after the cut; ` +
        `locking resumed after the new master was named: ` +
        (["master cut off", "Sentinel ↔ Sentinels", "replica link"] as Kind[])
          .map((k) => `${k} ${resumesOf(k).join(", ")} ms`)
          .join("; "),
    );
    for (const kind of KINDS) expect(faults.filter((f) => f.kind === kind).length, kind).to.equal(EACH);
    for (const [i, ms] of stops.entries())
      expect(ms, `coordinator cut off from the Sentinels (${i}): ms until it stopped`).to.be.within(0, STOPS_MS);
    for (const [i, r] of resumes.entries()) {
      if (r === undefined) continue;
      expect(r, `resume after partition ${i} (${faults[i].kind}), ms after the new master was named`).to.be.within(
        0,
        RESUME_MS,
      );
    }
  });
});

/** The announced port of a node replicating from `master` now (the Sentinels' view). */
async function replicaOf(group: SentinelGroup, master: number): Promise<number> {
  const sentinel = new Redis(group.sentinels[0]);
  try {
    const replicas = (await sentinel.call("SENTINEL", "REPLICAS", group.masterName)) as string[][];
    const field = (r: string[], name: string) => r[r.indexOf(name) + 1];
    const online = replicas.filter((r) => !/s_down|o_down|disconnected/.test(field(r, "flags")));
    const port = Number(field(online[0] ?? replicas[0], "port"));
    if (!port || port === master) throw new Error(`no replica of ${master} in ${JSON.stringify(replicas)}`);
    return port;
  } finally {
    sentinel.disconnect();
  }
}
