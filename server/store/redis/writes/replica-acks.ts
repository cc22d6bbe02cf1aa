import type { Redis } from "ioredis";
import { StoreUnacknowledgedError } from "../../store-unacknowledged-error.js";
import type { StoreUnavailableError } from "../../store-unavailable-error.js";
import { writeHandedOver } from "../scripts/runner/lock-scripts.js";

/** What one WAIT answered, and on which connection. */
export interface AckResult {
  ok: boolean;
  acked: number;
  wanted: number;
  /** A failover of the master was announced before the WAIT answered: nothing it covers is confirmed. */
  failover?: boolean;
}

const FAILOVER_MESSAGE =
  "redis: a failover of the master was announced before its replicas confirmed the write; " +
  "its outcome is unknown until the new master is in place: retry later";

interface Batch {
  socket: unknown;
  /** The writer's generation when the batch's first write was sent. */
  generation: number;
  done: Promise<AckResult>;
}

/**
 * Confirms writes with WAIT on the connection that sent them (one server, or one Cluster master).
 * Writes started in one turn of the event loop form a batch, and one WAIT sent after them (in the
 * check phase, behind the corked scripts) acknowledges them all: WAIT covers every write its
 * connection sent before it. A write's promise settles only after its batch's WAIT: with the reply
 * when `wanted` replicas hold it, with StoreUnacknowledgedError when fewer did within `timeoutMs`,
 * or when `generation()` moved on before the WAIT answered: a failover of the master was announced,
 * and the replicas that acknowledged may not include the one being promoted.
 */
export class ReplicaAcks {
  private batch?: Batch;

  constructor(
    private readonly redis: Redis,
    /** Replicas to wait for; 0 sends no WAIT at all. */
    private readonly wanted: () => number,
    private readonly timeoutMs: number,
    /**
     * The batch's one sure write, sent just before its WAIT: a read-only script moves this
     * connection's replication offset nowhere, yet may report another connection's write; the mark
     * (replicated) moves it past everything so far.
     */
    private readonly mark: (redis: Redis) => Promise<unknown>,
    /** Told every WAIT's result (health, and the grants held back until acknowledged). */
    private readonly onResult: (result: AckResult, socket: unknown) => void,
    /** Whose replicas, in the error message (e.g. " of its Cluster shard"). */
    private readonly scope = "",
    /** Moves on when a failover of the master is announced (MasterEpoch.generation); fixed without Sentinels. */
    private readonly generation: () => number = () => 0,
  ) {}

  /** The connection writes go out on now; a WAIT on another one acknowledges nothing of them. */
  get socket(): unknown {
    return this.redis.stream;
  }

  /**
   * Sends `write` now and resolves with its reply once acknowledged; when the WAIT falls short,
   * `unacknowledged` gets the reply before the promise rejects (not when a failover was announced:
   * then the reply is dropped).
   */
  async confirm<T>(write: () => Promise<T>, unacknowledged?: (reply: T, socket: unknown) => void): Promise<T> {
    const wanted = this.wanted();
    if (wanted === 0) return write();
    const socket = this.socket;
    const reply = write();
    const ack = this.joinBatch(socket, wanted);
    const [value, result] = await Promise.all([reply, ack]);
    if (!result.ok) {
      // Held grants go out with a later WAIT on this connection; after a failover announcement none may.
      if (!result.failover) unacknowledged?.(value, socket);
      throw result.failover
        ? new StoreUnacknowledgedError(result.acked, result.wanted, FAILOVER_MESSAGE)
        : unacknowledgedError(result, this.timeoutMs, this.scope);
    }
    return value;
  }

  /** Sends a WAIT of its own: acknowledges every write sent so far on this connection. */
  probe(): Promise<AckResult> {
    return this.joinBatch(this.socket, this.wanted());
  }

  private joinBatch(socket: unknown, wanted: number): Promise<AckResult> {
    if (this.batch && this.batch.socket === socket) return this.batch.done;
    const generation = this.generation();
    const done = new Promise<AckResult>((resolve) => {
      // setImmediate: after every write started in this turn (LockScripts writes a tick's scripts at its end).
      setImmediate(() => {
        if (this.batch?.done === done) this.batch = undefined;
        resolve(this.sendWait(socket, wanted, generation));
      });
    });
    this.batch = { socket, generation, done };
    return done;
  }

  private async sendWait(socket: unknown, wanted: number, generation: number): Promise<AckResult> {
    let result: AckResult = { ok: false, acked: 0, wanted };
    try {
      // A reconnect in between means the writes went to a connection this WAIT cannot speak for.
      if (this.socket === socket && this.redis.status === "ready") {
        // Scripts still waiting for the end of their tick go out first: the WAIT must follow them.
        writeHandedOver(this.redis);
        this.mark(this.redis).catch(() => {});
        const acked = Number(await this.redis.wait(wanted, this.timeoutMs));
        const failover = generation !== this.generation();
        result = { ok: acked >= wanted && !failover, acked, wanted, failover };
      }
    } catch {
      // The connection failed: the writes' own replies fail too and say so.
    }
    this.onResult(result, socket);
    return result;
  }
}

function unacknowledgedError(result: AckResult, timeoutMs: number, scope: string): StoreUnavailableError {
  return new StoreUnacknowledgedError(
    result.acked,
    result.wanted,
    `redis: the write reached ${result.acked} of the ${result.wanted} replicas${scope} it must reach within ${timeoutMs} ms; ` +
      "its outcome is unknown until they acknowledge it: retry later",
  );
}
