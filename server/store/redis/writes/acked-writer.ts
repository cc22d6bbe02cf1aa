import { Redis } from "ioredis";
import { epochSourceOf, MasterEpoch } from "../connection/master-epoch.js";
import { redisCall } from "../connection/redis-call.js";
import type { RedisAuth, RedisClient, RedisTarget } from "../connection/redis-connection.js";
import { SentinelFailoverWatch } from "../connection/sentinel-failover-watch.js";
import { ReplicaAcks } from "./replica-acks.js";

/** Where Redis is, and how the writer confirms writes: replica count ("majority" needs Sentinels), WAIT timeout. */
export interface AckSettings {
  target: RedisTarget;
  auth: RedisAuth;
  replicaAcks?: number | "majority";
  replicaAckTimeoutMs?: number;
  prefix: string;
}

/**
 * The Redis store's writes as the replicas must confirm them: sends each state change (mapping
 * connection trouble to StoreUnavailableError), waits for the replicas when acks are on, and knows
 * the epoch floors scripts must pass. `ready` is false while the epoch of the connected master is
 * unknown or the last WAIT fell short; `onChange` hears every change of it, and `recovered` each
 * time writes can be acknowledged again after they could not (a new master, replicas back).
 */
export class AckedWriter {
  readonly epoch: MasterEpoch;
  private readonly acks?: ReplicaAcks;
  private acked = true;
  private readonly probe: NodeJS.Timeout;
  private readonly watch?: SentinelFailoverWatch;

  constructor(
    redis: RedisClient,
    settings: AckSettings,
    hooks: {
      onChange(): void;
      recovered(): void;
      acknowledged(socket: unknown): void;
      /** The epoch of the connected master was learnt (again, or of a new master): before any write there. */
      masterLearned?(epoch: number): void;
      /** Writes stopped for a failover (or no Sentinel is heard): grants held for a later WAIT must not go out. */
      suspended?(): void;
    },
  ) {
    const single = redis instanceof Redis ? redis : undefined;
    const source = epochSourceOf(settings.target, settings.auth);
    let learned = false;
    this.epoch = new MasterEpoch(
      single,
      source,
      () => {
        hooks.masterLearned?.(this.epoch.epoch ?? 0);
        hooks.onChange();
        if (learned) hooks.recovered();
        learned = true;
      },
      hooks.onChange,
    );
    // Sentinels announce a failover before they promote: from then on no write of this master is told
    // (docs/operations.md, "A planned failover"); a coordinator that hears no Sentinel stops too.
    if (single && source.kind === "sentinel") {
      const suspend = () => {
        this.epoch.suspend();
        hooks.suspended?.();
      };
      this.watch = new SentinelFailoverWatch(source.sentinels, source.masterName, source.options, {
        started: suspend,
        settled: () => this.epoch.resume(),
        heard: (live) => (live === 0 ? suspend() : this.epoch.resume()),
      });
    }
    const wanted = settings.replicaAcks ?? 0;
    // While writes cannot be acknowledged, a WAIT of its own now and then finds out when they can.
    this.probe = setInterval(() => this.acked || void this.acks?.probe(), 500).unref();
    if (wanted === "majority" && source.kind === "none")
      throw new TypeError("RedisStore: replicaAcks 'majority' needs a Sentinel target (which knows the replicas)");
    // Each new connection may be to a new master: learn its epoch before running scripts there.
    redis.on("ready", () => void this.epoch.refresh());
    if (!single || wanted === 0) return;
    const count = () => (wanted === "majority" ? Math.floor((1 + (this.epoch.replicas ?? 0)) / 2) : wanted);
    this.acks = new ReplicaAcks(
      single,
      count,
      settings.replicaAckTimeoutMs ?? 1000,
      // A channel nobody needs to listen on: the PUBLISH is replicated, so it moves the offset.
      (r) => r.publish(`${settings.prefix}:acks`, ""),
      (r, s) => {
        const was = this.acked;
        this.acked = r.ok;
        if (r.ok) hooks.acknowledged(s);
        if (was !== r.ok) hooks.onChange();
        if (r.ok && !was) hooks.recovered();
      },
      "",
      () => this.epoch.generation,
    );
  }

  /** True when replicas confirm writes (scripts then return other coordinators' grants). */
  get confirming(): boolean {
    return this.acks !== undefined;
  }

  /** The epoch of the master is known and the last WAIT (if any) reached its replicas. */
  get ready(): boolean {
    return this.epoch.ready && this.acked;
  }

  /** The floors "F V" for a script sent now (throws unavailable while the epoch is unknown). */
  floors(): string {
    return this.epoch.floors();
  }

  /** Sends a state change and resolves once the replicas hold it (at once without acks). */
  write<T>(send: () => Promise<T>, held?: (reply: T, socket: unknown) => void): Promise<T> {
    const acks = this.acks;
    return redisCall(() => (acks ? acks.confirm(send, held) : send()));
  }

  /** Stops the probe and the failover watch. */
  close(): void {
    clearInterval(this.probe);
    this.watch?.close();
  }
}
