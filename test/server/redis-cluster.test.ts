import { expect } from "chai";
import { Cluster } from "ioredis";
import { TurnstileClient } from "../../client/index.js";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { startRedisCluster, type TestRedisCluster } from "../harness/redis-cluster.js";
import { spawnServe, startTargetCoordinator } from "../harness/redis-coordinator.js";
import { runTurnstile, type TurnstileProcess } from "../harness/run-turnstile.js";
import { until } from "../harness/until.js";

describe("coordinators on a Redis Cluster (3 masters)", () => {
  let cluster: TestRedisCluster;
  let inProcess: { address: string; stop(): Promise<void> };
  let serve: TurnstileProcess;
  let viaCli: string;
  let admin: Cluster;
  const clients: TurnstileClient[] = [];
  const client = (address: string) => {
    const c = new TurnstileClient(address, { ttlMs: 60_000 });
    clients.push(c);
    return c;
  };

  before(async () => {
    cluster = await startRedisCluster(3);
    inProcess = await startTargetCoordinator({ kind: "cluster", nodes: cluster.nodes });
    const nodes = cluster.nodes.map((n) => `${n.host}:${n.port}`).join(",");
    // Acks off, like the in-process one: both pass floors "0 0", so tokens count from 1 (acks on: docs/data-model.md).
    ({ address: viaCli, serve } = await spawnServe(["--redis-cluster", nodes, "--redis-replica-acks", "off"]));
    admin = new Cluster(cluster.nodes);
  });
  after(async () => {
    admin.disconnect();
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    serve.child.kill("SIGKILL");
    await inProcess.stop();
    await cluster.stop();
  });

  it("hands a lock from a holder on one coordinator to a waiter on the other by push, with the next token", async () => {
    const holder = await client(inProcess.address).acquire("cluster/handoff");
    const waiting = client(viaCli).acquire("cluster/handoff");
    const queue = lockKeys("turnstile", "cluster/handoff")[2];
    await until(async () => (await admin.zcard(queue)) > 0, "the waiter in the queue", 10_000, 5);
    const released = Date.now();
    await holder.release();
    const next = await waiting;
    // The holder's lease is a minute away: only the published grant can explain a quick hand-off.
    expect(Date.now() - released).to.be.below(2000);
    expect(next.fencingToken).to.equal(holder.fencingToken + 1n);
  });

  it("keeps locks whose keys live on different masters exclusive and fenced", async () => {
    const names = Array.from({ length: 12 }, (_, i) => `cluster/spread-${i}`);
    const masters = new Set<string>();
    for (const name of names) {
      const slot = (await admin.cluster("KEYSLOT", lockKeys("turnstile", name)[0])) as number;
      masters.add(admin.slots[slot][0]);
    }
    expect(masters.size).to.be.above(1);
    const first = client(inProcess.address);
    const second = client(viaCli);
    const held = await Promise.all(names.map((n) => first.acquire(n)));
    expect(held.map((l) => l.fencingToken)).to.deep.equal(names.map(() => 1n));
    expect(await Promise.all(names.map((n) => second.tryAcquire(n)))).to.deep.equal(names.map(() => null));
    await Promise.all(held.map((l) => l.release()));
    const again = await Promise.all(names.map((n) => second.acquire(n)));
    expect(again.map((l) => l.fencingToken)).to.deep.equal(names.map(() => 2n));
  });

  it("lists the locks of every master with `turnstile ls`, names with a hash tag too", async () => {
    const names = [
      ...Array.from({ length: 12 }, (_, i) => `cluster-ls/n-${i}`),
      "cluster-ls/{t}/a",
      "cluster-ls/{t}/b",
    ];
    const masters = new Set(
      await Promise.all(
        names.map(async (n) => admin.slots[(await admin.cluster("KEYSLOT", lockKeys("turnstile", n)[0])) as number][0]),
      ),
    );
    expect(masters.size, "the names' masters").to.equal(3);
    const holder = client(inProcess.address);
    const held = await Promise.all(names.map((n) => holder.acquire(n)));
    const run = await runTurnstile(["ls", "--output", "json", "cluster-ls/"], { env: { TURNSTILE_SERVER: viaCli } });
    expect([run.code, run.stderr]).to.deep.equal([0, ""]);
    const listed = (JSON.parse(run.stdout) as { name: string; holders: number }[]).map((l) => [l.name, l.holders]);
    expect(listed).to.deep.equal([...names].sort().map((n) => [n, 1]));
    await Promise.all(held.map((l) => l.release()));
  });
});
