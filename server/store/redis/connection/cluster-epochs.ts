import type { Cluster, Redis } from "ioredis";
import { EPOCH_SHIFT, MAX_EPOCH } from "./master-epoch.js";

/** What one Cluster master said of itself, valid for the connection it was asked on. */
export interface NodeEpoch {
  socket: unknown;
  /** The master's config epoch (CLUSTER NODES, its own line). */
  epoch: number;
  /** Replicas the cluster lists for this master, failed ones too. */
  replicas: number;
  /** "F V" for scripts on this master: F = epoch << 32, V = its clock in µs when the epoch was learned. */
  floors: string;
}

/**
 * The config epoch of each Cluster master, learned on the very connection the store writes on.
 * A replica promoted by a failover takes a config epoch greater than every other in the cluster,
 * and a master's own epoch only grows, so the epoch of a slot's master goes up with every failover
 * of its shard: tokens floored at epoch << 32 after one exceed every token before (data-model.md).
 * An epoch is forgotten when its connection closes or its node stops being a master.
 */
export class ClusterEpochs {
  private readonly known = new Map<Redis, NodeEpoch>();
  private readonly asking = new Map<Redis, Promise<void>>();

  constructor(
    private readonly cluster: Cluster,
    /** Told whenever an epoch is learned, changes or is forgotten. */
    private readonly onChange: () => void,
  ) {}

  /** The epoch of `node` for its current connection, or undefined while unknown. */
  of(node: Redis): NodeEpoch | undefined {
    const known = this.known.get(node);
    return known && node.status === "ready" && known.socket === node.stream ? known : undefined;
  }

  /** Forgets the nodes that are no longer masters and asks every master again (after a slot refresh). */
  async refreshAll(): Promise<void> {
    const masters = new Set(this.cluster.nodes("master"));
    let dropped = false;
    for (const node of this.known.keys()) if (!masters.has(node)) dropped = this.known.delete(node);
    if (dropped) this.onChange();
    await Promise.all([...masters].map((node) => this.learn(node)));
  }

  /** Asks `node` for its epoch (once at a time per node); a failure leaves it unknown until asked again. */
  learn(node: Redis): Promise<void> {
    let asking = this.asking.get(node);
    if (!asking) {
      asking = this.ask(node).finally(() => this.asking.delete(node));
      this.asking.set(node, asking);
    }
    return asking;
  }

  private async ask(node: Redis): Promise<void> {
    try {
      const lines = String(await node.call("CLUSTER", "NODES"))
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => line.trim().split(" "));
      const socket = node.stream;
      const me = lines.find((f) => f[2]?.split(",").includes("myself"));
      // Fields: id address flags master-id ping pong config-epoch link slot...; a master without slots serves nothing.
      const [epoch, master] = [Number(me?.[6]), me?.[2].split(",").includes("master")];
      if (!me || !master || me.length < 9 || !(epoch <= MAX_EPOCH)) {
        if (this.known.delete(node)) this.onChange();
        return;
      }
      const replicas = lines.filter((f) => f[3] === me[0]).length;
      const before = this.known.get(node);
      if (before && before.socket === socket && before.epoch === epoch) {
        before.replicas = replicas;
        return;
      }
      const [seconds, micros] = await node.time();
      if (node.stream !== socket) return;
      const floors = `${BigInt(epoch) << EPOCH_SHIFT} ${BigInt(seconds) * 1_000_000n + BigInt(micros)}`;
      this.known.set(node, { socket, epoch, replicas, floors });
      this.onChange();
    } catch {
      // The node did not answer (down, failing over): the next refresh asks again.
    }
  }
}
