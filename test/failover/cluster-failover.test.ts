import { expect } from "chai";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { checkFailoverLog } from "../harness/check-failover-log.js";
import { type ClusterFleet, startClusterFleet } from "../harness/cluster-fleet.js";
import type { ClusterGroup } from "../harness/cluster-group.js";
import type { CoordinatorProcess } from "../harness/coordinator-process.js";
import { type FailoverWorkers, startFailoverWorkers, writeEventLog } from "../harness/failover-fleet.js";

const KILLS = Number(process.env.TURNSTILE_CLUSTER_FAILOVER_KILLS ?? 8);
// SIGSTOP of a master until its replica took over: the coordinators' sockets to it hang instead of closing.
const FREEZES = Number(process.env.TURNSTILE_CLUSTER_FAILOVER_FREEZES ?? 3);
// Small enough for a short run, large enough that a loaded 2-core machine does not fail nodes by mistake.
const NODE_TIMEOUT_MS = 2000;
// Longer than detection plus failover, so holders keep their locks across one.
const TTL_MS = 15_000;
// After the replica took over: the coordinators' next slot refresh (1 s), learning the new master's
// epoch, and the clients' retry, on a loaded machine.
const RESUME_MS = 10_000;
const LOCKS = ["cfo/a", "cfo/b", "cfo/c"];
const SEMAPHORE = { name: "cfo/sem", limit: 2 };
const NAMES = [...LOCKS, SEMAPHORE.name];

describe("failover: Redis Cluster of 3 masters with a replica each, 2 coordinators, 6 clients, kill -9 and freezes of masters", function () {
  this.timeout(15 * 60_000);
  let fleet: ClusterFleet | undefined;
  let group: ClusterGroup;
  let coordinators: CoordinatorProcess[] = [];
  let logDir: string;
  let workers: FailoverWorkers | undefined;

  before(async () => {
    fleet = await startClusterFleet(3, NODE_TIMEOUT_MS, 2, "turnstile-cluster-failover-");
    ({ group, coordinators, logDir } = fleet);
  });

  after(async () => {
    for (const child of workers?.children ?? []) child.kill("SIGKILL");
    await fleet?.stop();
  });

  /**
   * Logs what the store holds for `names` now (holders, their data, queue and leases; deadlines are
   * ms on the Redis clock, `redisMs`), stamped with the monotonic clock of the event log.
   */
  async function dumpLocks(names: string[], why: string): Promise<void> {
    const admin = (fleet as ClusterFleet).admin;
    const at = process.hrtime.bigint();
    const read = async (name: string) => {
      const [holders, data, queue, leases] = lockKeys("turnstile", name);
      const [seconds, micros] = await admin.time();
      return {
        name,
        redisMs: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000),
        holders: await admin.zrange(holders, "0", "-1", "WITHSCORES"),
        data: await admin.hgetall(data),
        queue: await admin.zrange(queue, "0", "-1", "WITHSCORES"),
        leases: await admin.zrange(leases, "0", "-1", "WITHSCORES"),
      };
    };
    const state = await Promise.all(names.map(read)).catch((err: unknown) => `unreadable (${err})`);
    console.log(`      ${why}; at ${at} the store holds ${JSON.stringify(state)}`);
  }

  /** The port of the master serving `name`'s slot now. */
  async function ownerPort(name: string): Promise<number> {
    return (await (fleet as ClusterFleet).placeOf(name)).port;
  }

  it(`keeps exclusion, fencing order and the semaphore limit through ${KILLS} kill -9 and ${FREEZES} freezes of a Cluster master`, async () => {
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

    const grantsAfter = (at: bigint, names: string[]) =>
      events.filter((e) => e.ev === "grant" && BigInt(e.at) > at && names.includes(e.name as string));
    const waitForGrants = async (at: bigint, names: string[], what: string) => {
      const giveUpAt = Date.now() + 60_000;
      let dumpAt: number | undefined = Date.now() + 8_000;
      while (grantsAfter(at, names).length < 3) {
        if (dumpAt !== undefined && Date.now() > dumpAt) {
          dumpAt = undefined;
          await dumpLocks(names, `${what}: no locking for 8 s`);
        }
        if (Date.now() > giveUpAt) {
          const tail = events.filter((e) => BigInt(e.at) > at).slice(-30);
          throw new Error(
            `no locking of ${names} after ${what} (coordinator logs in ${logDir}): tail ${JSON.stringify(tail)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    // `wallMs`: the wall clock at `at`, which the coordinators' logs are stamped with.
    const faults: { kind: string; at: bigint; wallMs: number; killed: number; names: string[]; promotedAt: bigint }[] =
      [];
    await waitForGrants(0n, NAMES, "the start");
    // The kinds interleaved: freezes spread among the kills.
    const mix = [
      ...Array.from({ length: KILLS }, (_, i) => ({ kind: "kill -9", i: i / KILLS })),
      ...Array.from({ length: FREEZES }, (_, i) => ({ kind: "freeze", i: (i + 0.5) / FREEZES })),
    ]
      .sort((a, b) => a.i - b.i)
      .map((f) => f.kind);
    for (const [k, kind] of mix.entries()) {
      await group.settled();
      const last = faults.at(-1);
      if (last) await waitForGrants(last.at, last.names, "the last fault");
      // Each kill hits the master of one of the names in use, in turn, and so every name it serves.
      const victim = await ownerPort(NAMES[k % NAMES.length]);
      const owners = await Promise.all(NAMES.map(ownerPort));
      const names = NAMES.filter((_n, i) => owners[i] === victim);
      const [at, wallMs] = [process.hrtime.bigint(), Date.now()];
      const { promotedAt } = await (kind === "freeze" ? group.freezeMaster(victim) : group.killMaster(victim));
      faults.push({ kind, at, wallMs, killed: victim, names, promotedAt });
    }
    const last = faults.at(-1);
    if (last) await waitForGrants(last.at, last.names, "the last fault");
    await workers.stop();

    writeEventLog(logDir, faults, events);
    const report = checkFailoverLog(events, new Map([[SEMAPHORE.name, SEMAPHORE.limit]]));
    const ms = (ns: bigint) => Number(ns / 1_000_000n);
    const failoverMs = faults.map((f) => ms(f.promotedAt - f.at));
    // Locking of the killed master's names resumed this long after its replica took over.
    const resumes = faults.map((f) => {
      const first = grantsAfter(f.promotedAt, f.names)[0];
      return first ? ms(BigInt(first.at) - f.promotedAt) : -1;
    });
    const resumesOf = (kind: string) => resumes.filter((_r, i) => faults[i].kind === kind);
    console.log(
      `      faults: ${resumesOf("kill -9").length} kill -9 and ${resumesOf("freeze").length} freezes (SIGSTOP until ` +
        `the replica took over) of a Cluster master (cluster-node-timeout ${NODE_TIMEOUT_MS} ms); ` +
        `checked ${report.acquires} acquires (${report.grants} granted, ` +
        `failed: ${JSON.stringify(Object.fromEntries(report.failures))}), ${report.lost} holds lost; ` +
        `grants by name ${JSON.stringify(Object.fromEntries(report.grantsByName))}; ` +
        `no token twice, tokens increasing, no overlap, semaphore <= ${SEMAPHORE.limit}, every acquire ended; ` +
        `a replica took over within ${Math.max(...failoverMs)} ms of a fault (max; mean ` +
        `${Math.round(failoverMs.reduce((x, y) => x + y, 0) / failoverMs.length)} ms); locking of its names resumed ` +
        `within ${Math.max(...resumes)} ms of that (max; after each kill: ${resumesOf("kill -9").join(", ")}; ` +
        `after each freeze: ${resumesOf("freeze").join(", ")})`,
    );
    expect(faults.length).to.equal(KILLS + FREEZES);
    // Every session kept renewing (a failover takes a few seconds, a lease 15): a waiter told EXPIRED was forgotten.
    expect(report.failures.get("expired") ?? 0, "acquires answered EXPIRED").to.equal(0);
    for (const [i, r] of resumes.entries())
      expect(
        r,
        `resume after ${faults[i].kind} ${i} of ${faults[i].killed}, ms after its replica took over`,
      ).to.be.within(0, RESUME_MS);
  });
});
