import { expect } from "chai";
import { Cluster, Redis } from "ioredis";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import type { AcquireArgs } from "../../server/store/store.js";
import { StoreUnacknowledgedError } from "../../server/store/store-unacknowledged-error.js";
import { type ClusterGroup, startClusterGroup } from "../harness/cluster-group.js";
import { RecordingListener } from "../harness/recording-listener.js";
import { until } from "../harness/until.js";

function claim(name: string, sessionId: string, requestId: string): AcquireArgs {
  return { name, sessionId, owner: "o", requestId, ttlMs: 30_000, mode: "exclusive", limit: 0, mayWait: true };
}

describe("RedisStore with replica acks on Redis Cluster (3 masters, a replica each)", function () {
  this.timeout(120_000);
  let group: ClusterGroup;
  let admin: Cluster;
  let stores: RedisStore[] = [];

  before(async () => {
    group = await startClusterGroup(3, 1000);
    admin = new Cluster(group.nodes);
  });
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
  });
  after(async () => {
    admin?.disconnect();
    await group?.stop();
  });

  // A WAIT has 1.5 s by default here: the machine may be loaded; the test of a WAIT that falls short uses 300 ms.
  async function started(replicaAckTimeoutMs = 1500): Promise<RedisStore> {
    const store = new RedisStore({
      target: { kind: "cluster", nodes: group.nodes },
      replicaAcks: "majority",
      replicaAckTimeoutMs,
    });
    stores.push(store);
    await store.start(new RecordingListener());
    return store;
  }

  /** The port and id of the master owning `name`'s slot, and its config epoch and replica. */
  async function ownerOf(name: string) {
    const slot = Number(await admin.cluster("KEYSLOT", lockKeys("turnstile", name)[0]));
    const ranges = await admin.cluster("SLOTS");
    const range = ranges.find(([from, to]) => from <= slot && slot <= to);
    if (!range) throw new Error(`no master serves slot ${slot}`);
    const [, masterPort, masterId] = range[2];
    const view = await group.view(masterPort);
    const master = view.find((n) => n.id === masterId);
    const replica = view.find((n) => n.masterId === masterId);
    return { port: masterPort, epoch: master?.epoch as number, replicaPort: replica?.port as number };
  }

  it("floors tokens at the config epoch of the slot's master (epoch << 32)", async () => {
    const store = await started();
    for (const name of ["c/a", "c/b", "c/c", "c/d"]) {
      const { epoch } = await ownerOf(name);
      const outcome = await store.acquire(claim(name, "aa01", "r1"));
      expect(outcome).to.deep.include({ kind: "granted", token: (BigInt(epoch) << 32n) + 1n });
    }
  });

  it("sends the script, then one WAIT, on the connection of the master that took the write", async () => {
    const store = await started();
    const names = ["m/a", "m/b", "m/c", "m/d", "m/e", "m/f"];
    const owners = await Promise.all(names.map(ownerOf));
    const seen = new Map<number, { cmd: string; source: string }[]>();
    const clients = group.nodes.map((n) => new Redis(n.port, n.host));
    const monitors = await Promise.all(
      clients.map(async (c, i) => {
        const m = await c.monitor();
        m.on("monitor", (_t: string, args: string[], source: string) => {
          const cmd = String(args[0]).toLowerCase();
          if (["eval", "evalsha", "wait", "set"].includes(cmd))
            seen.set(group.nodes[i].port, [...(seen.get(group.nodes[i].port) ?? []), { cmd, source }]);
        });
        return m;
      }),
    );
    try {
      // One turn: the six acquires form one batch per master.
      await Promise.all(names.map((name, i) => store.acquire(claim(name, "aa01", `r${i}`))));
      // MONITOR lines come on other connections and may trail the replies: wait for every script and WAIT.
      const shown = () => [...seen.values()].flat();
      await until(
        () =>
          shown().filter((l) => l.cmd.startsWith("eval")).length >= names.length &&
          owners.every((o) => seen.get(o.port)?.some((l) => l.cmd === "wait")),
        "MONITOR to show every script and WAIT",
      );
      for (const port of new Set(owners.map((o) => o.port))) {
        const log = seen.get(port) ?? [];
        const scripts = log.filter((l) => l.cmd.startsWith("eval"));
        const waits = log.filter((l) => l.cmd === "wait");
        expect(scripts.length, `scripts on ${port}`).to.equal(owners.filter((o) => o.port === port).length);
        expect(waits.length, `WAITs on ${port}`).to.equal(1);
        // One client connection sent them all, and the WAIT came after every script of the batch.
        expect(new Set(log.map((l) => l.source)).size).to.equal(1);
        expect(log.at(-1)?.cmd).to.equal("wait");
      }
      // Every other node (replicas: they see only the replicated effects) got no script and no WAIT.
      const others = group.nodes.filter((n) => !owners.some((o) => o.port === n.port));
      for (const n of others) {
        const sent = (seen.get(n.port) ?? []).filter((l) => l.cmd !== "set");
        expect(sent, `node ${n.port} took no script and no WAIT`).to.deep.equal([]);
      }
    } finally {
      for (const c of [...monitors, ...clients]) c.disconnect();
    }
  });

  it("answers unacknowledged, naming the replica count, while the shard's replica does not answer, and reads NOT_SERVING until it does", async () => {
    const store = await started(300);
    const { replicaPort } = await ownerOf("s/a");
    const replicaAdmin = new Redis(replicaPort);
    const pid = (await replicaAdmin.info("server")).match(/process_id:(\d+)/)?.[1];
    replicaAdmin.disconnect();
    process.kill(Number(pid), "SIGSTOP");
    try {
      const err = await store.acquire(claim("s/a", "aa01", "r1")).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(StoreUnacknowledgedError);
      expect((err as Error).message).to.match(
        /reached 0 of the 1 replicas of its Cluster shard it must reach within 300 ms/,
      );
      expect(store.healthy()).to.equal(false);
    } finally {
      process.kill(Number(pid), "SIGCONT");
    }
    await new Promise<void>((resolve) => (store.healthy() ? resolve() : store.onHealthChange((h) => h && resolve())));
  });

  it("issues, after a kill -9 of a slot's master, tokens above every token before it", async () => {
    const store = await started();
    const before = await ownerOf("f/a");
    let last = 0n;
    for (let i = 0; i < 3; i++) {
      const outcome = await store.acquire(claim("f/a", "aa01", `r${i}`));
      if (outcome.kind === "granted") last = outcome.token;
      await store.release({ name: "f/a", sessionId: "aa01", owner: "o" }, false);
    }
    await group.killMaster(before.port);
    await group.settled();
    const after = await ownerOf("f/a");
    expect(after.epoch).to.be.above(before.epoch);
    let outcome = await store.acquire(claim("f/a", "aa01", "r9")).catch((e: unknown) => e);
    for (let i = 0; i < 100 && !(typeof outcome === "object" && outcome && "kind" in outcome); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      outcome = await store.acquire(claim("f/a", "aa01", "r9")).catch((e: unknown) => e);
    }
    expect(outcome).to.deep.include({ kind: "granted" });
    const token = (outcome as { token: bigint }).token;
    expect(token > last).to.equal(true);
    expect(token >> 32n).to.equal(BigInt(after.epoch));
  });
});
