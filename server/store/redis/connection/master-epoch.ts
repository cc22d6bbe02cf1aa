import { readFileSync } from "node:fs";
import type { Redis, RedisOptions } from "ioredis";
import { StoreUnavailableError } from "../../store-unavailable-error.js";
import type { HostPort, RedisAuth, RedisTarget } from "./redis-connection.js";
import { askSentinelMaster } from "./sentinel-master.js";

/** Bits of a fencing token below the epoch: tokens are `epoch << 32 | counter` (docs/data-model.md). */
export const EPOCH_SHIFT = 32n;
/** The highest usable epoch: Lua numbers are doubles, so floors and tokens stay exact below 2^53. */
export const MAX_EPOCH = 2 ** 21 - 1;

/** Where the master's epoch comes from: none (a single server: epoch 0) or the Sentinels. */
export type EpochSource =
  | { kind: "none" }
  | { kind: "sentinel"; sentinels: HostPort[]; masterName: string; options: RedisOptions };

interface Known {
  socket: unknown;
  epoch: number;
  replicas: number;
  floors: string;
}

/**
 * The epoch of the master the command connection is on, learned each time that connection
 * becomes ready: the highest config-epoch any Sentinel reports, accepted only when the Sentinel
 * that reports it names this very server (by run id, or address) as the master. Scripts get it as floors
 * "F V": tokens above F = epoch << 32, versions above V = the new master's clock in µs when the
 * epoch was learned. Until it is known for the current connection, `floors` throws unavailable.
 *
 * No view is taken from a Sentinel failing the master over. `suspend` forgets the epoch when a
 * failover of this master is announced (or no Sentinel is heard): no script runs until it is learned
 * again from a view a majority of the Sentinels back (the promoted master, or the same one when the
 * failover was aborted).
 * `generation` counts the suspensions, so that a WAIT whose writes were sent before one cannot
 * confirm them (ReplicaAcks).
 */
export class MasterEpoch {
  private known?: Known;
  /** A failover was announced (or no Sentinel heard) since the epoch was last learned. */
  private suspended = false;
  private refreshing?: { socket: unknown; done: Promise<void> };
  /** Suspensions so far: a write sent in an earlier generation is not confirmed by a later WAIT. */
  generation = 0;

  constructor(
    private readonly redis: Redis | undefined,
    private readonly source: EpochSource,
    private readonly onChange: () => void,
    /** Told when `suspend` stops the scripts (health). */
    private readonly onSuspend: () => void = () => {},
  ) {}

  /** The floors for a script sent now; throws StoreUnavailableError while the epoch is unknown. */
  floors(): string {
    if (this.source.kind === "none") return "0 0";
    const known = this.current();
    if (!known)
      throw new StoreUnavailableError("redis: the master's epoch is not known yet (failover?): retry later", {
        outcome: "unchanged",
      });
    return known.floors;
  }

  /** True when scripts can run on the current connection (always without Sentinels). */
  get ready(): boolean {
    return this.source.kind === "none" || this.current() !== undefined;
  }

  /** The epoch in use, or undefined while unknown. */
  get epoch(): number | undefined {
    return this.source.kind === "none" ? 0 : this.current()?.epoch;
  }

  /** Replicas the Sentinels know of this master (down ones too); undefined without Sentinels. */
  get replicas(): number | undefined {
    return this.current()?.replicas;
  }

  /**
   * Stops scripts at once: a Sentinel announced a failover of this master (or none is heard), so a
   * write here may be lost with a replica that is being promoted. Learning starts again at once.
   */
  suspend(): void {
    if (this.source.kind === "none") return;
    this.generation++;
    this.suspended = true;
    this.known = undefined;
    this.onSuspend();
    void this.refresh();
  }

  /** Learns again after a suspension (a failover settled, a Sentinel heard again); nothing otherwise. */
  resume(): void {
    if (this.suspended) void this.refresh();
  }

  /** Learns the epoch for the current connection; retries until it succeeds or the connection changes. */
  refresh(): Promise<void> {
    if (this.source.kind === "none" || !this.redis) return Promise.resolve();
    // A learner of an earlier connection may still be winding down: each connection gets its own.
    const socket = this.redis.stream;
    if (this.refreshing?.socket !== socket) {
      const done = this.learn(this.redis, this.source).finally(() => {
        if (this.refreshing?.done === done) this.refreshing = undefined;
      });
      this.refreshing = { socket, done };
    }
    return this.refreshing.done;
  }

  private current(): Known | undefined {
    return this.known && this.known.socket === this.redis?.stream ? this.known : undefined;
  }

  private async learn(redis: Redis, source: Extract<EpochSource, { kind: "sentinel" }>): Promise<void> {
    const socket = redis.stream;
    let elsewhere = 0;
    for (let attempt = 0; redis.stream === socket && redis.status === "ready"; attempt++) {
      const generation = this.generation;
      try {
        const runId = /run_id:(\w+)/.exec(await redis.info("server"))?.[1];
        const views = await Promise.all(source.sentinels.map((s) => askSentinel(s, source)));
        const best = newestView(views);
        // The newest configuration names another server: this one is a demoted master (or a stale
        // address came back from a Sentinel). No script runs here, so no READONLY error would ever
        // move the connection: reconnect, which asks the Sentinels for the master again.
        // At once when a majority agree on the other server and none is failing over (a reconnect right
        // after +switch-master asked a Sentinel that had not switched yet); else after three rounds.
        if (best && !namesThisServer(best, runId, redis) && (agreedElsewhere(best, views) || ++elsewhere >= 3)) {
          // Only a ready connection: disconnecting one that is connecting ends the client for good.
          if (redis.stream === socket && redis.status === "ready") redis.disconnect(true);
          return;
        }
        if (
          best &&
          namesThisServer(best, runId, redis) &&
          best.epoch <= MAX_EPOCH &&
          resumableAfter(this.suspended, best, views)
        ) {
          const [seconds, micros] = await redis.time();
          if (redis.stream !== socket) return;
          // A failover announced while this round asked: its answers are stale.
          if (generation !== this.generation) continue;
          this.suspended = false;
          const floors = `${BigInt(best.epoch) << EPOCH_SHIFT} ${BigInt(seconds) * 1_000_000n + BigInt(micros)}`;
          this.known = { socket, epoch: best.epoch, replicas: best.replicas, floors };
          this.onChange();
          return;
        }
      } catch {
        // A Sentinel or the server did not answer: ask again.
      }
      // Short: the Sentinels' views converge within moments of the naming, and writes wait for this.
      await new Promise((resolve) => setTimeout(resolve, Math.min(25 * 2 ** attempt, 100)));
    }
  }
}

/**
 * How many Sentinels that answered stand behind `best`: the same epoch and address, and not failing the
 * master over. The leader of a failover reports the new epoch with the old master's address (and run
 * id) from the promotion until its own +switch-master, while the others already name the promoted one.
 */
function backing(best: SentinelView, views: (SentinelView | undefined)[]): number {
  const same = (v: SentinelView | undefined) =>
    v !== undefined && !v.failingOver && v.epoch === best.epoch && v.ip === best.ip && v.port === best.port;
  return views.filter(same).length;
}

/**
 * A view may be taken unless it comes from a Sentinel failing the master over (a demoted master would
 * then write tokens of the new epoch); after a suspension a majority of all the Sentinels must back it,
 * since the one failing the master over may be among those that did not answer.
 */
function resumableAfter(suspended: boolean, best: SentinelView, views: (SentinelView | undefined)[]): boolean {
  if (best.failingOver) return false;
  return !suspended || backing(best, views) > views.length / 2;
}

/** A majority of the Sentinels back `best`, which names another server: reconnect at once. */
function agreedElsewhere(best: SentinelView, views: (SentinelView | undefined)[]): boolean {
  return backing(best, views) > views.length / 2;
}

interface SentinelView {
  epoch: number;
  /** Empty until the Sentinel's next INFO of a just promoted master (up to 10 s). */
  runId: string;
  ip: string;
  port: number;
  replicas: number;
  /** The Sentinel is failing this master over (its leader, between +try-failover and +switch-master). */
  failingOver: boolean;
}

/**
 * The view the newest configuration stands for: of the views with the highest config-epoch, one
 * naming the address most of them name (the first, on a tie). Right after a promotion the Sentinel
 * that led the failover reports the new epoch with the old address until its own +switch-master
 * (about 1 s later), while the others already name the promoted master.
 */
function newestView(views: (SentinelView | undefined)[]): SentinelView | undefined {
  const top = Math.max(...views.map((v) => v?.epoch ?? -1));
  const newest = views.filter((v): v is SentinelView => v?.epoch === top);
  const votes = (v: SentinelView) => newest.filter((w) => w.ip === v.ip && w.port === v.port).length;
  return newest.reduce<SentinelView | undefined>((a, b) => (!a || votes(b) > votes(a) ? b : a), undefined);
}

/** The Sentinel names the server `redis` is connected to: by run id, or by address while it knows none. */
function namesThisServer(view: SentinelView, runId: string | undefined, redis: Redis): boolean {
  if (view.runId) return view.runId === runId;
  const socket = redis.stream as { remoteAddress?: string; remotePort?: number } | undefined;
  return socket?.remotePort === view.port && socket.remoteAddress?.replace(/^::ffff:/, "") === view.ip;
}

async function askSentinel(
  at: HostPort,
  source: Extract<EpochSource, { kind: "sentinel" }>,
): Promise<SentinelView | undefined> {
  const field = await askSentinelMaster(at, source.masterName, source.options);
  if (!field) return undefined;
  return {
    epoch: Number(field("config-epoch")),
    runId: field("runid") ?? "",
    ip: field("ip") ?? "",
    port: Number(field("port")),
    replicas: Number(field("num-slaves")),
    failingOver: (field("flags") ?? "").includes("failover_in_progress"),
  };
}

/** The epoch source of a target: its Sentinels (with their password and TLS), or none. */
export function epochSourceOf(target: RedisTarget, auth: RedisAuth): EpochSource {
  if (target.kind !== "sentinel") return { kind: "none" };
  const tls = auth.tls ? (auth.tlsCaFile ? { ca: readFileSync(auth.tlsCaFile) } : {}) : undefined;
  const options = { password: auth.sentinelPassword, tls };
  return { kind: "sentinel", sentinels: target.sentinels, masterName: target.masterName, options };
}
