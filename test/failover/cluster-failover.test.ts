import { type ChildProcess, fork } from "node:child_process";
import { createWriteStream, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { Cluster } from "ioredis";
import { lockKeys } from "../../server/store/redis/lock-keys.js";
import { type ChildEvent, checkFailoverLog } from "../harness/check-failover-log.js";
import { type ClusterGroup, startClusterGroup } from "../harness/cluster-group.js";
import { type CoordinatorProcess, spawnCoordinatorWith } from "../harness/coordinator-process.js";

const CHILD = fileURLToPath(new URL("../harness/failover-child.ts", import.meta.url));
const KILLS = Number(process.env.TURNSTILE_CLUSTER_FAILOVER_KILLS ?? 8);
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

describe("failover: Redis Cluster of 3 masters with a replica each, 2 coordinators, 6 clients, kill -9 of masters", function () {
  this.timeout(15 * 60_000);
  let group: ClusterGroup;
  let admin: Cluster;
  const coordinators: CoordinatorProcess[] = [];
  const children: ChildProcess[] = [];
  const logDir = mkdtempSync(join(tmpdir(), "turnstile-cluster-failover-"));

  before(async () => {
    group = await startClusterGroup(3, NODE_TIMEOUT_MS);
    admin = new Cluster(group.nodes);
    admin.on("error", () => {});
    const nodes = group.nodes.map((n) => `${n.host}:${n.port}`).join(",");
    for (let i = 0; i < 2; i++) {
      const c = await spawnCoordinatorWith(["--redis-cluster", nodes, "--redis-replica-acks", "majority"]);
      // Drain the logs to a file, or a full pipe would stall the coordinator.
      const log = createWriteStream(join(logDir, `coordinator-${i}.log`));
      c.process.stdout?.pipe(log);
      c.process.stderr?.pipe(log);
      coordinators.push(c);
    }
  });

  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    await Promise.all(coordinators.map((c) => c.kill()));
    admin?.disconnect();
    await group?.stop();
  });

  /** The port of the master serving `name`'s slot now. */
  async function ownerPort(name: string): Promise<number> {
    const slot = Number(await admin.cluster("KEYSLOT", lockKeys("turnstile", name)[0]));
    const range = (await admin.cluster("SLOTS")).find(([from, to]) => from <= slot && slot <= to);
    if (!range) throw new Error(`no master serves slot ${slot}`);
    return range[2][1];
  }

  it(`keeps exclusion, fencing order and the semaphore limit through ${KILLS} kill -9 of a Cluster master`, async () => {
    const events: ChildEvent[] = [];
    const addresses = coordinators.map((c) => c.address);
    const specs = [...LOCKS.map((n) => `lock:${n}`), `semaphore:${SEMAPHORE.name}:${SEMAPHORE.limit}`];
    // The token-checking resource: per name, a write with a token below the highest written is refused.
    const highest = new Map<string, bigint>();
    const done: Promise<void>[] = [];
    for (let i = 0; i < 6; i++) {
      // Each client prefers one coordinator, so grants cross coordinators through pub/sub.
      const mine = [addresses[i % 2], addresses[(i + 1) % 2]].join(",");
      const child = fork(CHILD, [`w${i}`, mine, String(TTL_MS), ...specs], {
        execArgv: ["--import", "tsx"],
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      children.push(child);
      done.push(new Promise((resolve) => child.once("exit", () => resolve())));
      child.on("message", (e: ChildEvent) => {
        events.push(e);
        if (e.ev !== "write") return;
        const name = e.name as string;
        const token = BigInt(e.token as string);
        const exclusive = name !== SEMAPHORE.name;
        const ok = !exclusive || token > (highest.get(name) ?? -1n);
        if (ok && exclusive) highest.set(name, token);
        child.send({ written: ok });
      });
    }

    const grantsAfter = (at: bigint, names: string[]) =>
      events.filter((e) => e.ev === "grant" && BigInt(e.at) > at && names.includes(e.name as string));
    const waitForGrants = async (at: bigint, names: string[], what: string) => {
      const giveUpAt = Date.now() + 60_000;
      while (grantsAfter(at, names).length < 3) {
        if (Date.now() > giveUpAt) {
          const tail = events.filter((e) => BigInt(e.at) > at).slice(-30);
          throw new Error(
            `no locking of ${names} after ${what} (coordinator logs in ${logDir}): tail ${JSON.stringify(tail)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const faults: { at: bigint; killed: number; names: string[]; promotedAt: bigint }[] = [];
    await waitForGrants(0n, NAMES, "the start");
    for (let k = 0; k < KILLS; k++) {
      await group.settled();
      const last = faults.at(-1);
      if (last) await waitForGrants(last.at, last.names, "the last kill");
      // Each kill hits the master of one of the names in use, in turn, and so every name it serves.
      const victim = await ownerPort(NAMES[k % NAMES.length]);
      const owners = await Promise.all(NAMES.map(ownerPort));
      const names = NAMES.filter((_n, i) => owners[i] === victim);
      const at = process.hrtime.bigint();
      const { killed, promotedAt } = await group.killMaster(victim);
      faults.push({ at, killed, names, promotedAt });
    }
    const last = faults.at(-1);
    if (last) await waitForGrants(last.at, last.names, "the last kill");
    for (const child of children) child.send("stop");
    await Promise.all(done);

    // Kept for a post-mortem next to the coordinators' logs.
    writeFileSync(
      join(logDir, "events.jsonl"),
      [...faults, ...events]
        .map((e) => JSON.stringify(e, (_k, v) => (typeof v === "bigint" ? String(v) : v)))
        .join("\n"),
    );
    const report = checkFailoverLog(events, new Map([[SEMAPHORE.name, SEMAPHORE.limit]]));
    const ms = (ns: bigint) => Number(ns / 1_000_000n);
    const failoverMs = faults.map((f) => ms(f.promotedAt - f.at));
    // Locking of the killed master's names resumed this long after its replica took over.
    const resumes = faults.map((f) => {
      const first = grantsAfter(f.promotedAt, f.names)[0];
      return first ? ms(BigInt(first.at) - f.promotedAt) : -1;
    });
    console.log(
      `      faults: ${faults.length} kill -9 of a Cluster master (cluster-node-timeout ${NODE_TIMEOUT_MS} ms); ` +
        `checked ${report.acquires} acquires (${report.grants} granted, ` +
        `failed: ${JSON.stringify(Object.fromEntries(report.failures))}), ${report.lost} holds lost; ` +
        `grants by name ${JSON.stringify(Object.fromEntries(report.grantsByName))}; ` +
        `no token twice, tokens increasing, no overlap, semaphore <= ${SEMAPHORE.limit}, every acquire ended; ` +
        `a replica took over within ${Math.max(...failoverMs)} ms of a kill (max; mean ` +
        `${Math.round(failoverMs.reduce((x, y) => x + y, 0) / failoverMs.length)} ms); locking of its names resumed ` +
        `within ${Math.max(...resumes)} ms of that (max; each: ${resumes.join(", ")})`,
    );
    expect(faults.length).to.equal(KILLS);
    for (const [i, r] of resumes.entries())
      expect(r, `resume after kill ${i} of ${faults[i].killed}, ms after its replica took over`).to.be.within(
        0,
        RESUME_MS,
      );
  });
});
