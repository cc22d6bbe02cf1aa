import { expect } from "chai";
import { Redis } from "ioredis";
import { TurnstileClient } from "../../client/index.js";
import { type ChildEvent, checkFailoverLog } from "../harness/check-failover-log.js";
import { type CoordinatorProcess, spawnCoordinatorWith } from "../harness/coordinator-process.js";
import { type SentinelGroup, startSentinelGroup } from "../harness/sentinel-group.js";
import { notYetOnError, until } from "../harness/until.js";

const TTL_MS = 20_000;

/**
 * Issue 37's lost grant, made certain. SENTINEL FAILOVER promotes a replica (SLAVEOF NO ONE) before
 * it reconfigures the other replica and demotes the old master. The lone Sentinel is SIGSTOPped the
 * moment the promoted replica reports itself master, so the window stays open: the old master still
 * takes writes, the other replica still follows it and acknowledges them (WAIT majority passes).
 * A grant written there now is lost when the Sentinel resumes and the other replica resyncs from the
 * new master; another client is then granted the same lock while the first still holds it.
 *
 * The coordinators hear the Sentinel announce the failover before the promotion, and run no script
 * on that master until the new one is in place: the first client's acquire is refused as unavailable
 * (nothing changed) and granted on the new master when it asks again; the second queues behind it.
 */
describe("a grant on the old master while a planned Sentinel failover promotes a replica", function () {
  this.timeout(120_000);
  let group: SentinelGroup;
  const coordinators: CoordinatorProcess[] = [];
  const clients: TurnstileClient[] = [];
  const admins: Redis[] = [];
  let stoppedPid: number | undefined;
  let frozenCoordinator: CoordinatorProcess | undefined;

  before(async () => {
    // One Sentinel (quorum 1): nothing but SENTINEL FAILOVER moves the master, and freezing it freezes the failover.
    group = await startSentinelGroup(2, 1, { downAfterMs: 60_000, failoverTimeoutMs: 20_000 });
    const store = group.serveArgs();
    coordinators.push(await spawnCoordinatorWith(store), await spawnCoordinatorWith(store));
  });
  after(async () => {
    if (stoppedPid) process.kill(stoppedPid, "SIGCONT");
    frozenCoordinator?.process.kill("SIGCONT");
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    for (const a of admins) a.disconnect();
    await Promise.all(coordinators.map((c) => c.kill()));
    await group?.stop();
  });

  const admin = (port: number) => {
    const r = new Redis({ port, host: "127.0.0.1" });
    r.on("error", () => {});
    admins.push(r);
    return r;
  };

  it("never has two holders: the acquire is refused during the promotion and granted on the new master", async () => {
    const [a, b] = coordinators.map((c) => {
      const client = new TurnstileClient([c.address], { ttlMs: TTL_MS });
      clients.push(client);
      return client;
    });
    const events: ChildEvent[] = [];
    const now = () => String(process.hrtime.bigint());
    const log = (e: Omit<ChildEvent, "at">) => events.push({ ...e, at: now() });
    // Both sessions are open and serving before the failover starts.
    for (const client of [a, b]) await (await client.acquire("warm", { waitMs: 10_000 })).release();

    const sentinel = admin(group.sentinels[0].port);
    const oldMasterPort = await group.masterPort();
    // The master's own list: a Sentinel may not have discovered every replica yet.
    const info = await admin(oldMasterPort).info("replication");
    const replicaPorts = [...info.matchAll(/^slave\d+:ip=[^,]+,port=(\d+)/gm)].map((m) => Number(m[1]));
    expect(replicaPorts).to.have.length(2);
    const replicas = replicaPorts.map(admin);
    const pid = Number(/process_id:(\d+)/.exec(await sentinel.info("server"))?.[1]);

    await sentinel.call("SENTINEL", "FAILOVER", group.masterName);
    // Stop the Sentinel between its SLAVEOF NO ONE and its reconfiguration of the other replica.
    let promoted = -1;
    await until(
      notYetOnError(async () => {
        const roles = await Promise.all(replicas.map(async (r) => ((await r.call("ROLE")) as string[])[0]));
        promoted = roles.indexOf("master");
        return promoted >= 0;
      }),
      "a replica to be promoted",
      30_000,
      2,
    );
    process.kill(pid, "SIGSTOP");
    stoppedPid = pid;
    // The window is open: the other replica still follows the old master (ROLE: slave, host, port, ...).
    expect(((await replicas[1 - promoted].call("ROLE")) as unknown[])[2]).to.equal(oldMasterPort);

    // A acquires while the promotion is frozen half-way, and again until granted (a worker's loop).
    let lostA: string | undefined;
    let attempt = 0;
    const acquireA = () => {
      const id = `A#${++attempt}`;
      log({ worker: "A", ev: "start", id, name: "hot" });
      return a.acquire("hot", { waitMs: 60_000 }).then(
        (lock) => {
          log({ worker: "A", ev: "grant", id, name: "hot", token: String(lock.fencingToken) });
          log({ worker: "A", ev: "end", id, name: "hot", outcome: "granted" });
          // A stops using the lock the moment its signal says it lost it (told first).
          lock.signal.addEventListener("abort", () => (lostA ??= now()), { once: true });
          return { id, lock };
        },
        (err: Error & { reason?: string }) => {
          log({ worker: "A", ev: "end", id, name: "hot", outcome: err.reason ?? err.name });
          return { id, error: err };
        },
      );
    };
    const first = acquireA();
    // Long enough for a grant on the old master to be written, acknowledged and told (a few ms).
    const early = await Promise.race([
      first.then((r) => ("lock" in r ? "granted" : `refused (${r.error.message})`)),
      new Promise<string>((resolve) => setTimeout(() => resolve("waiting"), 1000)),
    ]);

    // A's coordinator is then held still: a coordinator slow to notice the lost grant (the run) tells A nothing.
    const freezeA = () => {
      coordinators[0].process.kill("SIGSTOP");
      frozenCoordinator = coordinators[0];
    };
    if (early === "granted") freezeA();
    process.kill(pid, "SIGCONT");
    stoppedPid = undefined;
    await until(
      notYetOnError(async () => (await group.masterPort()) === replicaPorts[promoted]),
      "the Sentinel to switch to the promoted replica",
      30_000,
      20,
    );
    await until(
      notYetOnError(async () => ((await admin(oldMasterPort).call("ROLE")) as string[])[0] === "slave"),
      "the old master to be demoted",
      30_000,
      50,
    );
    let held = await first;
    for (const giveUpAt = Date.now() + 30_000; !("lock" in held) && Date.now() < giveUpAt; ) held = await acquireA();
    if (!("lock" in held)) throw held.error;
    const { id: idA, lock: lockA } = held;
    if (early !== "granted") freezeA();

    // B asks for the same lock on the new master through the other coordinator; A's lease has most of its time left.
    log({ worker: "B", ev: "start", id: "B#1", name: "hot" });
    const acquiredB = b.acquire("hot", { waitMs: 60_000 }).then((lock) => {
      log({ worker: "B", ev: "grant", id: "B#1", name: "hot", token: String(lock.fencingToken) });
      log({ worker: "B", ev: "end", id: "B#1", name: "hot", outcome: "granted" });
      return lock;
    });
    // A uses the lock until B is granted or a second has passed, then stops (checking its signal) and lets go.
    const bFirst = await Promise.race([acquiredB.then(() => true), new Promise((r) => setTimeout(r, 1000, false))]);
    const token = String(lockA.fencingToken);
    const toldLost = lostA !== undefined;
    if (lostA) events.push({ worker: "A", ev: "lost", id: idA, name: "hot", token, at: lostA });
    else log({ worker: "A", ev: "exit", id: idA, name: "hot", token });
    coordinators[0].process.kill("SIGCONT");
    frozenCoordinator = undefined;
    await lockA.release().catch(() => {});
    const lockB = await acquiredB;
    log({ worker: "B", ev: "exit", id: "B#1", name: "hot", token: String(lockB.fencingToken) });
    await lockB.release();

    console.log(
      `      A's acquire while the promotion was frozen: ${early}; B granted before A let go: ${bFirst}; ` +
        `A told it lost the lock: ${toldLost}; tokens A ${lockA.fencingToken}, B ${lockB.fencingToken}`,
    );
    events.sort((x, y) => (BigInt(x.at) < BigInt(y.at) ? -1 : 1));
    const report = checkFailoverLog(events, new Map());
    expect(report.grants).to.equal(2);
    expect(early, "A was told a grant of the old master during the promotion").not.to.equal("granted");
    expect(bFirst, "B was granted while A held the lock").to.equal(false);
  });
});
