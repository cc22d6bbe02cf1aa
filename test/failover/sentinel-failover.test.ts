import { mkdtempSync } from "node:fs";
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
import { type SentinelGroup, startSentinelGroup } from "../harness/sentinel-group.js";

const KILLS = Number(process.env.TURNSTILE_FAILOVER_KILLS ?? 6);
// SENTINEL FAILOVER promotes a replica while the old master still takes writes (issue 37's window).
const SENTINEL_FAILOVERS = Number(process.env.TURNSTILE_SENTINEL_FAILOVERS ?? 15);
// SIGSTOP of the master past down-after: the coordinators' sockets to it hang instead of closing.
const FREEZES = Number(process.env.TURNSTILE_MASTER_FREEZES ?? 15);
// `npm run test:failover:long`: keeps injecting the same mix until this many minutes have passed.
const MINUTES = Number(process.env.TURNSTILE_FAILOVER_MINUTES ?? 0);
const TIMINGS = { downAfterMs: 3000, failoverTimeoutMs: 2000 };
// Longer than detection plus failover, so holders keep their locks across one.
const TTL_MS = 15_000;
// How soon locking resumes after the Sentinels named the new master (ms), by fault: the coordinators
// reconnect (a frozen master's socket is destroyed after 100 ms), learn the new epoch once a majority
// of the Sentinels back it, and (after a SENTINEL FAILOVER) replay their release journal there.
// Measured (docs/operations.md): max 361 ms after a kill -9, 764 after a SENTINEL FAILOVER, 211 after
// a freeze, on a 2-core machine busy with other work; issue 37 asks for 1 s, and 1.5 s leaves room for load.
const RESUME_MS: Record<string, number> = { "kill -9": 1500, "SENTINEL FAILOVER": 1500, freeze: 1500 };
const LOCKS = ["fo/a", "fo/b", "fo/c"];
const SEMAPHORE = { name: "fo/sem", limit: 2 };

describe("failover: 3 redis-server + 3 Sentinels, 2 coordinators, 6 clients; the master killed, failed over and frozen", function () {
  this.timeout((15 + MINUTES) * 60_000);
  let group: SentinelGroup;
  let coordinators: CoordinatorProcess[] = [];
  let workers: FailoverWorkers | undefined;

  const logDir = mkdtempSync(join(tmpdir(), "turnstile-failover-"));

  before(async () => {
    group = await startSentinelGroup(2, 3, TIMINGS);
    const store = group.serveArgs();
    coordinators = await spawnLoggedCoordinators(2, store, logDir);
  });

  after(async () => {
    for (const child of workers?.children ?? []) child.kill("SIGKILL");
    await Promise.all(coordinators.map((c) => c.kill()));
    await group?.stop();
  });

  it(`keeps exclusion, fencing order and the semaphore limit through ${KILLS} kills, ${SENTINEL_FAILOVERS} Sentinel failovers and ${FREEZES} freezes`, async () => {
    const specs = [...LOCKS.map((n) => `lock:${n}`), `semaphore:${SEMAPHORE.name}:${SEMAPHORE.limit}`];
    // Six clients, each preferring one coordinator, so grants cross coordinators through pub/sub.
    workers = startFailoverWorkers(
      6,
      coordinators.map((c) => c.address),
      TTL_MS,
      specs,
      SEMAPHORE.name,
    );
    const { events } = workers;

    // `wallMs` (Date.now() at the fault) lines the events up with the coordinators' log times.
    const faults: { kind: string; at: bigint; wallMs: number; promotedAt?: bigint }[] = [];
    const grantsAfter = (at: bigint) => events.filter((e) => e.ev === "grant" && BigInt(e.at) > at).length;
    const waitForGrants = async (at: bigint, what: string) => {
      const giveUpAt = Date.now() + 60_000;
      while (grantsAfter(at) < 5) {
        if (Date.now() > giveUpAt) {
          const last = new Map(events.map((e) => [e.worker, e]));
          const tail = events.filter((e) => BigInt(e.at) > at).slice(-30);
          throw new Error(
            `no locking after ${what} (coordinator logs in ${logDir}): last per worker ${JSON.stringify([...last.values()])}; tail ${JSON.stringify(tail)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    // Each fault hits a group where locking flows (a grant within the last second), so its resume time
    // is its own; a lull left by the previous fault (up to a lease) is waited out, bounded, and printed.
    let longestLullMs = 0;
    const flowing = async () => {
      const started = process.hrtime.bigint();
      const giveUpAt = Date.now() + 60_000;
      for (;;) {
        const recent = process.hrtime.bigint() - 1_000_000_000n;
        // Holds last a few ms: an acquire waiting over a second is a lull (its name is held by nobody working).
        const last = new Map(events.map((e) => [e.worker, e]));
        const waitingLong = [...last.values()].some((e) => e.ev === "start" && BigInt(e.at) < recent);
        if (!waitingLong && events.some((e) => e.ev === "grant" && BigInt(e.at) > recent)) break;
        if (Date.now() > giveUpAt) throw new Error(`locking stalled for 60 s between faults (logs in ${logDir})`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      longestLullMs = Math.max(longestLullMs, Number((process.hrtime.bigint() - started) / 1_000_000n));
    };
    await waitForGrants(0n, "the start");
    // The kinds interleaved: kill, failover, freeze, ... until each has its count (and, long, the time is up).
    const mix = [
      ...Array.from({ length: KILLS }, (_, i) => ({ kind: "kill -9", i: i / KILLS })),
      ...Array.from({ length: SENTINEL_FAILOVERS }, (_, i) => ({
        kind: "SENTINEL FAILOVER",
        i: i / SENTINEL_FAILOVERS,
      })),
      ...Array.from({ length: FREEZES }, (_, i) => ({ kind: "freeze", i: i / FREEZES })),
    ]
      .sort((a, b) => a.i - b.i)
      .map((f) => f.kind);
    const endAt = Date.now() + MINUTES * 60_000;
    for (let k = 0; k < mix.length || Date.now() < endAt; k++) {
      await group.settled();
      // A Sentinel starts no new failover of a master within twice the failover timeout of its last one.
      await new Promise((resolve) => setTimeout(resolve, 2 * TIMINGS.failoverTimeoutMs));
      await waitForGrants(faults.at(-1)?.at ?? 0n, "the last fault");
      await flowing();
      const at = process.hrtime.bigint();
      const kind = mix[k % mix.length];
      const fault: (typeof faults)[number] = { kind, at, wallMs: Date.now() };
      faults.push(fault);
      const injected =
        kind === "kill -9" ? group.killMaster() : kind === "freeze" ? group.freezeMaster() : group.failover();
      fault.promotedAt = (await injected).promotedAt;
    }
    await waitForGrants(faults.at(-1)?.at ?? 0n, "the last fault");
    await workers.stop();

    writeEventLog(logDir, faults, events);
    // One per failover injected; more when an election was retried or the Sentinels failed over on their own.
    const sentinel = new Redis(group.sentinels[0]);
    const master = (await sentinel.call("SENTINEL", "MASTER", group.masterName)) as string[];
    sentinel.disconnect();
    const epoch = Number(master[master.indexOf("config-epoch") + 1]);
    const report = checkFailoverLog(events, new Map([[SEMAPHORE.name, SEMAPHORE.limit]]));
    // Locking resumed after each fault once the Sentinels had named the new master (which takes
    // down-after + the failover itself; how long is Sentinel's business, and reported): within
    // RESUME_MS of that, the time for the coordinators to reconnect and learn the new epoch.
    const ms = (ns: bigint) => Number(ns / 1_000_000n);
    const failoverMs = faults.map((f) => ms((f.promotedAt as bigint) - f.at));
    const resumes = faults.map((f) => {
      const first = events.find((e) => e.ev === "grant" && BigInt(e.at) > (f.promotedAt as bigint));
      return first ? ms(BigInt(first.at) - (f.promotedAt as bigint)) : -1;
    });
    const count = (kind: string) => faults.filter((f) => f.kind === kind).length;
    const resumesOf = (kind: string) => resumes.filter((_r, i) => faults[i].kind === kind).sort((x, y) => x - y);
    const summary = (kind: string) => {
      const r = resumesOf(kind);
      return `${kind} median ${r[Math.floor(r.length / 2)]} ms, max ${r.at(-1)} ms`;
    };
    console.log(
      `      faults: ${count("kill -9")} kill -9 of the master, ${count("SENTINEL FAILOVER")} SENTINEL FAILOVER, ` +
        `${count("freeze")} master frozen (SIGSTOP past down-after); ` +
        `checked ${report.acquires} acquires (${report.grants} granted, ` +
        `failed: ${JSON.stringify(Object.fromEntries(report.failures))}), ${report.lost} holds lost; ` +
        `grants by name ${JSON.stringify(Object.fromEntries(report.grantsByName))}; ` +
        `0 strict overlaps (no holder used a lock after the next holder's grant), no token twice, tokens increasing, ` +
        `semaphore <= ${SEMAPHORE.limit}, every acquire ended; ` +
        `Sentinels named a new master within ${Math.max(...failoverMs)} ms of a fault (max; mean ` +
        `${Math.round(failoverMs.reduce((x, y) => x + y, 0) / failoverMs.length)} ms); locking resumed after the naming: ` +
        `${summary("kill -9")}; ${summary("SENTINEL FAILOVER")}; ${summary("freeze")}; ` +
        `longest lull before a fault (waited out): ${longestLullMs} ms; Sentinel config epoch ${epoch} ` +
        `after ${faults.length} failovers injected`,
    );
    expect(count("kill -9")).to.be.at.least(KILLS);
    expect(count("SENTINEL FAILOVER")).to.be.at.least(SENTINEL_FAILOVERS);
    expect(count("freeze")).to.be.at.least(FREEZES);
    // Every session kept renewing (a failover takes seconds, a lease 15): a waiter told EXPIRED was forgotten.
    expect(report.failures.get("expired") ?? 0, "acquires answered EXPIRED").to.equal(0);
    // A lull of most of a lease is a lock held by a request nobody waits for any more (its lease must run out).
    expect(longestLullMs, "the longest lull before a fault, ms").to.be.below(TTL_MS / 2);
    for (const [i, r] of resumes.entries()) {
      expect(r, `resume after fault ${i} (${faults[i].kind}), ms after the new master was named`).to.be.within(
        0,
        RESUME_MS[faults[i].kind],
      );
    }
  });
});
