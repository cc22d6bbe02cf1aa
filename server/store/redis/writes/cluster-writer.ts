import { type Cluster, Command, type Redis } from "ioredis";
import { StoreUnavailableError } from "../../store-unavailable-error.js";
import { ClusterEpochs } from "../connection/cluster-epochs.js";
import { redisCall } from "../connection/redis-call.js";
import { LockScripts } from "../scripts/runner/lock-scripts.js";
import { clusterRedirect, tryAgainDelayMs } from "./cluster-redirect.js";
import { type AckResult, ReplicaAcks } from "./replica-acks.js";
import type { StoreWriter, WriteTarget } from "./store-writer.js";

/** How a Cluster store confirms writes: replicas per shard (a count, or "majority" of the shard's), WAIT timeout. */
export interface ClusterWriterSettings {
  replicaAcks?: number | "majority";
  replicaAckTimeoutMs?: number;
  /** How long a write keeps following MOVED, ASK and TRYAGAIN while slots move (default 2000 ms). */
  commandTimeoutMs?: number;
  prefix: string;
}

// How often, with acks, the slot map is read again, so a failover is seen even by a coordinator that sends nothing.
const REFRESH_MS = 1000;

/**
 * The Redis store's writes on Cluster: each goes straight to the connection of the master that
 * owns its key's slot (not through the Cluster client's routing), with floors from that master's
 * config epoch, and with replica acks on, one WAIT per master per batch on that same connection
 * confirms it. While slots move, a write refused with MOVED, ASK or TRYAGAIN is sent again where
 * Redis says (confirmed by that master's WAIT) until the command timeout. Without replica acks the
 * floors are "0 0", as on one server, and the Cluster client routes and redirects each write itself.
 */
export class ClusterWriter implements StoreWriter {
  private readonly epochs: ClusterEpochs;
  /** Each master's WAIT batches, on the connection its writes go out on. */
  private readonly acks = new WeakMap<Redis, ReplicaAcks>();
  private readonly scripts = new WeakMap<Redis, LockScripts>();
  /** Masters whose last WAIT fell short. */
  private readonly unacked = new Set<Redis>();
  /** The last key written to each master: a key of a slot it owns, for the mark before a WAIT. */
  private readonly lastKeys = new WeakMap<Redis, string>();
  private readonly timer?: NodeJS.Timeout;
  private wasReady = false;
  private everReady = false;

  constructor(
    private readonly cluster: Cluster,
    /** The scripts as defined on the Cluster client, for writes without replica acks. */
    private readonly clusterScripts: LockScripts,
    private readonly settings: ClusterWriterSettings,
    private readonly hooks: { onChange(): void; recovered(): void; acknowledged(socket: unknown): void },
  ) {
    this.epochs = new ClusterEpochs(cluster, () => this.changed());
    if (!this.confirming) return;
    // Not while connecting: commands to the nodes then would race (and fail) the client's ready check.
    cluster.on("refresh", () => cluster.status === "ready" && void this.refresh());
    cluster.on("ready", () => void this.refresh());
    this.timer = setInterval(() => {
      if (cluster.status === "ready") cluster.refreshSlotsCache();
      // While a master's writes cannot be acknowledged, a WAIT of its own now and then finds out when they can.
      for (const node of this.unacked) void this.acksOf(node).probe();
    }, REFRESH_MS).unref();
  }

  /** True when replicas confirm writes, which also turns the epoch floors on. */
  get confirming(): boolean {
    return (this.settings.replicaAcks ?? 0) !== 0;
  }

  /** Every master in the slot map has a known epoch and no master's last WAIT fell short. */
  get ready(): boolean {
    if (!this.confirming) return true;
    const masters = this.cluster.nodes("master");
    return masters.length > 0 && masters.every((n) => this.epochs.of(n)) && this.unacked.size === 0;
  }

  floors(key: string): string {
    if (!this.confirming) return "0 0";
    const node = this.masterOf(key);
    const known = node && this.epochs.of(node);
    if (!known) {
      if (node) void this.epochs.learn(node);
      throw unavailable("the config epoch of the Cluster master of this key's slot is not known yet (failover?)");
    }
    return known.floors;
  }

  write<T>(key: string, send: (on: WriteTarget) => Promise<T>, held?: (reply: T, socket: unknown) => void): Promise<T> {
    // Without acks, as before: the Cluster client routes (and redirects) each script itself.
    if (!this.confirming) return redisCall(() => send({ redis: this.cluster, scripts: this.clusterScripts }));
    return redisCall(() => this.writeTo(key, { send, held, attempt: 0 }));
  }

  /**
   * Sends the write to the master that owns `key`'s slot in the slot map (or to `redirect.node`, after
   * a MOVED or ASK naming it) and confirms it there; a refusal because the slot moves is followed
   * (`redirected`) rather than failed.
   */
  private writeTo<T>(key: string, write: PendingWrite<T>, redirect?: { node: Redis; asking: boolean }): Promise<T> {
    // Same turn as floors(key): the same slot map, so the floors are this very master's (a redirect keeps them).
    const node = redirect?.node ?? this.masterOf(key);
    if (!node || !this.epochs.of(node)) {
      this.cluster.refreshSlotsCache();
      throw unavailable("no ready connection to the Cluster master of this key's slot (failover?)");
    }
    const sent = () => {
      // ASKING and the write go out back to back on this connection: ASKING covers the next command only.
      if (redirect?.asking) node.asking().catch(() => {});
      const reply = write.send({ redis: node, scripts: this.scriptsOf(node) });
      reply.catch((err) => clusterRedirect(err) || this.cluster.refreshSlotsCache());
      return reply;
    };
    const confirmed = this.acksOf(node).confirm(sent, write.held);
    return confirmed.then(undefined, (err: unknown) => this.redirected(key, write, err));
  }

  /**
   * Follows a refusal of a write because its slot moves, within the command timeout (from the first
   * refusal): MOVED and ASK to the node named (whose epoch is learnt first), TRYAGAIN after a pause.
   * Redis ran nothing when it refused, so sending again is safe; any other error is rethrown.
   */
  private async redirected<T>(key: string, write: PendingWrite<T>, err: unknown): Promise<T> {
    const redirect = clusterRedirect(err);
    write.giveUpAt ??= performance.now() + (this.settings.commandTimeoutMs ?? 2000);
    if (!redirect || performance.now() >= write.giveUpAt) throw err;
    if (redirect.kind === "tryagain") {
      await new Promise((resolve) => setTimeout(resolve, tryAgainDelayMs(write.attempt++)));
      return this.writeTo(key, write);
    }
    if (redirect.kind === "moved") this.cluster.refreshSlotsCache();
    const node = await this.masterAt(redirect.address);
    if (!node) throw err;
    if (!this.epochs.of(node)) await this.epochs.learn(node);
    return this.writeTo(key, write, { node, asking: redirect.kind === "ask" });
  }

  /** The master connection at `address` ("host:port"), after one slot-map refresh if it is not known yet. */
  private async masterAt(address: string): Promise<Redis | undefined> {
    const find = () => this.cluster.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === address);
    const found = find();
    if (found) return found;
    await new Promise<void>((resolve) => this.cluster.refreshSlotsCache(() => resolve()));
    return find();
  }

  async start(): Promise<void> {
    if (this.confirming) await this.refresh();
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async refresh(): Promise<void> {
    const masters = new Set(this.cluster.nodes("master"));
    for (const node of this.unacked.keys()) if (!masters.has(node)) this.unacked.delete(node);
    await this.epochs.refreshAll();
    this.changed();
  }

  /** Replicas a write on `node` must reach: the count, or a majority of the shard's replicas (down ones too). */
  private wanted(node: Redis): number {
    const acks = this.settings.replicaAcks ?? 0;
    return acks === "majority" ? Math.floor((1 + (this.epochs.of(node)?.replicas ?? 0)) / 2) : acks;
  }

  private acknowledged(node: Redis, result: AckResult, socket: unknown): void {
    if (result.ok) {
      const was = this.unacked.delete(node);
      this.hooks.acknowledged(socket);
      if (was) this.changed();
    } else if (!this.unacked.has(node)) {
      this.unacked.add(node);
      this.changed();
    }
  }

  /**
   * `node`'s WAIT batches. Their mark is a SET of a key in the slot of the node's last write: on
   * Cluster a PUBLISH travels the cluster bus, not the replication stream WAIT counts.
   */
  private acksOf(node: Redis): ReplicaAcks {
    let acks = this.acks.get(node);
    if (!acks) {
      const mark = (redis: Redis) =>
        redis.set(`${this.settings.prefix}:acks:{${hashTag(this.lastKeys.get(node) ?? "")}}`, "", "PX", 10_000);
      const onResult = (result: AckResult, socket: unknown) => this.acknowledged(node, result, socket);
      const timeoutMs = this.settings.replicaAckTimeoutMs ?? 1000;
      acks = new ReplicaAcks(node, () => this.wanted(node), timeoutMs, mark, onResult, " of its Cluster shard");
      this.acks.set(node, acks);
    }
    return acks;
  }

  private masterOf(key: string): Redis | undefined {
    const address = this.cluster.slots[new Command("exists", [key]).getSlot()]?.[0];
    const node = this.cluster.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === address);
    if (node) this.lastKeys.set(node, key);
    return node;
  }

  private scriptsOf(node: Redis): LockScripts {
    let scripts = this.scripts.get(node);
    if (!scripts) {
      scripts = new LockScripts(node);
      this.scripts.set(node, scripts);
    }
    return scripts;
  }

  private changed(): void {
    const ready = this.ready;
    // The first time is the start, not a recovery.
    if (ready && !this.wasReady && this.everReady) this.hooks.recovered();
    this.wasReady = ready;
    this.everReady ||= ready;
    this.hooks.onChange();
  }
}

/** One write on its way: what sends it, what gets an unacknowledged reply, and its retries after TRYAGAIN. */
interface PendingWrite<T> {
  send: (on: WriteTarget) => Promise<T>;
  held?: (reply: T, socket: unknown) => void;
  attempt: number;
  /** Set at the first refusal: past it, a refusal fails the write (as unavailable, nothing changed). */
  giveUpAt?: number;
}

/** The part of `key` Redis hashes to pick its slot: the first non-empty {tag}, else the whole key. */
function hashTag(key: string): string {
  const open = key.indexOf("{");
  const close = open < 0 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

function unavailable(why: string): StoreUnavailableError {
  return new StoreUnavailableError(`redis: ${why}: retry later`, { outcome: "unchanged" });
}
