import { expect } from "chai";
import { Cluster } from "ioredis";
import { TurnstileClient, TurnstileError } from "../../client/index.js";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { startRedisCluster, type TestRedisCluster } from "../harness/redis-cluster.js";
import { spawnServe, startTargetCoordinator } from "../harness/redis-coordinator.js";
import type { TurnstileProcess } from "../harness/run-turnstile.js";

// Deadlock detection on Redis Cluster: the wait registry is one key (one slot), the locks of the
// cycle live on different masters, and the two waits are served by two coordinators (one of them a
// `turnstile serve` process).
describe("deadlock detection on a Redis Cluster (3 masters, two coordinators)", () => {
  let cluster: TestRedisCluster;
  let inProcess: { address: string; stop(): Promise<void> };
  let serve: TurnstileProcess;
  let viaCli: string;
  const clients: TurnstileClient[] = [];
  const client = (address: string, clientName: string) => {
    const c = new TurnstileClient(address, { ttlMs: 60_000, clientName });
    clients.push(c);
    return c;
  };

  before(async () => {
    cluster = await startRedisCluster(3);
    inProcess = await startTargetCoordinator({ kind: "cluster", nodes: cluster.nodes });
    const nodes = cluster.nodes.map((n) => `${n.host}:${n.port}`).join(",");
    ({ address: viaCli, serve } = await spawnServe(["--redis-cluster", nodes, "--redis-replica-acks", "off"]));
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    serve.child.kill("SIGKILL");
    await inProcess.stop();
    await cluster.stop();
  });

  it("fails the younger wait of a 2-cycle whose locks live on different masters", async () => {
    const admin = new Cluster(cluster.nodes);
    const master = async (name: string) =>
      admin.slots[(await admin.cluster("KEYSLOT", lockKeys("turnstile", name)[0])) as number][0];
    // Two names on different masters: the first pair of candidates that are.
    const names = Array.from({ length: 12 }, (_, i) => `cluster/deadlock-${i}`);
    const x = names[0];
    const onMaster = await Promise.all(names.map(master));
    const y = names.find((_, i) => onMaster[i] !== onMaster[0]);
    admin.disconnect();
    if (y === undefined) throw new Error("all 12 names hash to one master");

    const a = client(inProcess.address, "worker-a");
    const b = client(viaCli, "worker-b");
    await a.acquire(x, { owner: "oa" });
    const yHeld = await b.acquire(y, { owner: "ob" });
    let aQueued!: () => void;
    const aQueuedP = new Promise<void>((resolve) => {
      aQueued = resolve;
    });
    const aWaits = a.acquire(y, { owner: "oa", onQueued: () => aQueued() });
    await aQueuedP;
    const failed = await b.acquire(x, { owner: "ob" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).to.be.instanceOf(TurnstileError);
    expect((failed as TurnstileError).reason).to.equal("deadlock");
    expect((failed as TurnstileError).deadlockCycle.map((s) => [s.owner, s.clientName, s.name])).to.deep.equal([
      ["ob", "worker-b", x],
      ["oa", "worker-a", y],
    ]);
    await yHeld.release();
    expect((await aWaits).name).to.equal(y);
  });
});
