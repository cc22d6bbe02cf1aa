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

const KILLS = Number(process.env.TURNSTILE_FAILOVER_KILLS ?? 20);
// Raise with TURNSTILE_SENTINEL_FAILOVERS to exercise the switch window (and the release journal) more often.
const SENTINEL_FAILOVERS = Number(process.env.TURNSTILE_SENTINEL_FAILOVERS ?? 5);
// down-after 1 s let the Sentinels fail over a master only starved of CPU on a loaded 2-core machine
// (token epochs moved between injected faults); such a failover has the switch window of SENTINEL
// FAILOVER (a lull of up to a lease before the release journal), so the test uses 3 s and prints the
// config epoch it ends at.
const TIMINGS = { downAfterMs: 3000, failoverTimeoutMs: 2000 };
// Longer than detection plus failover, so holders keep their locks across one.
const TTL_MS = 15_000;
// Reconnecting to the master the Sentinels name and learning its epoch, on a loaded 2-core machine:
// the coordinators were SERVING again within 1.3 s of the new master being named after every fault
// measured. Slower resumes seen (6-11 s) were lulls after such an uninjected failover, which had begun
// before the fault; each fault now also waits for locking to flow.
const RESUME_MS = 10_000;
// After a SENTINEL FAILOVER the coordinators replay their release journal on the new master, so the
// releases the old master acknowledged in its switch window no longer hold locks until their leases
// end (14 s measured before). Issue 26 asks for ~1 s; measured on this loaded 2-core machine with the
// journal: 117-787 ms over 13 SENTINEL FAILOVERs in 3 runs (docs/operations.md), so 1.5 s: about twice
// the slowest, for the load other processes put on the machine.
const RESUME_AFTER_FAILOVER_MS = 1500;
const LOCKS = ["fo/a", "fo/b", "fo/c"];
const SEMAPHORE = { name: "fo/sem", limit: 2 };

describe("failover: 3 redis-server + 3 Sentinels, 2 coordinators, 6 clients, kill -9 of the master", function () {
  this.timeout(15 * 60_000);
  let group: SentinelGroup;
  let coordinators: CoordinatorProcess[] = [];
  let workers: FailoverWorkers | undefined;

  const logDir = mkdtempSync(join(tmpdir(), "turnstile-failover-"));

  before(async () => {
    group = await startSentinelGroup(2, 3, TIMINGS);
    const sentinels = group.sentinels.map((s) => `${s.host}:${s.port}`).join(",");
    const store = [
      "--redis-sentinel",
      sentinels,
      "--redis-master",
      group.masterName,
      "--redis-replica-acks",
      "majority",
    ];
    coordinators = await spawnLoggedCoordinators(2, store, logDir);
  });

  after(async () => {
    for (const child of workers?.children ?? []) child.kill("SIGKILL");
    await Promise.all(coordinators.map((c) => c.kill()));
    await group?.stop();
  });

  it(`keeps exclusion, fencing order and the semaphore limit through ${KILLS} kills and ${SENTINEL_FAILOVERS} Sentinel failovers`, async () => {
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
    for (let k = 0; k < KILLS + SENTINEL_FAILOVERS; k++) {
      await group.settled();
      // A Sentinel starts no new failover of a master within twice the failover timeout of its last one.
      await new Promise((resolve) => setTimeout(resolve, 2 * TIMINGS.failoverTimeoutMs));
      await waitForGrants(faults.at(-1)?.at ?? 0n, "the last fault");
      await flowing();
      const at = process.hrtime.bigint();
      const sentinelDriven = k % Math.ceil((KILLS + SENTINEL_FAILOVERS) / SENTINEL_FAILOVERS) === 1;
      const kind = sentinelDriven ? "SENTINEL FAILOVER" : "kill -9";
      const fault: (typeof faults)[number] = { kind, at, wallMs: Date.now() };
      faults.push(fault);
      fault.promotedAt = (await (sentinelDriven ? group.failover() : group.killMaster())).promotedAt;
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
    const kills = faults.filter((f) => f.kind === "kill -9").length;
    const maxOf = (kind: string) => Math.max(...resumes.filter((_r, i) => faults[i].kind === kind));
    console.log(
      `      faults: ${kills} kill -9 of the master, ${faults.length - kills} SENTINEL FAILOVER; ` +
        `checked ${report.acquires} acquires (${report.grants} granted, ` +
        `failed: ${JSON.stringify(Object.fromEntries(report.failures))}), ${report.lost} holds lost; ` +
        `grants by name ${JSON.stringify(Object.fromEntries(report.grantsByName))}; ` +
        `no token twice, tokens increasing, no overlap, semaphore <= ${SEMAPHORE.limit}, every acquire ended; ` +
        `Sentinels named a new master within ${Math.max(...failoverMs)} ms of a fault (max; mean ` +
        `${Math.round(failoverMs.reduce((x, y) => x + y, 0) / failoverMs.length)} ms); locking resumed within ` +
        `${maxOf("kill -9")} ms of that after a kill -9, ${maxOf("SENTINEL FAILOVER")} ms after a SENTINEL FAILOVER (max); ` +
        `longest lull before a fault (waited out): ${longestLullMs} ms; Sentinel config epoch ${epoch} ` +
        `after ${faults.length} failovers injected`,
    );
    expect(kills).to.be.at.least(KILLS);
    for (const [i, r] of resumes.entries()) {
      // SENTINEL FAILOVER leaves the old master writable, with the other replica still attached,
      // until the Sentinels demote it: a release acknowledged there in that window is lost with it,
      // and the coordinator that made it replays it on the new master (docs/operations.md).
      const bound = faults[i].kind === "kill -9" ? RESUME_MS : RESUME_AFTER_FAILOVER_MS;
      expect(r, `resume after fault ${i} (${faults[i].kind}), ms after the new master was named`).to.be.within(
        0,
        bound,
      );
    }
  });
});
