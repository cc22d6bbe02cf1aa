import type { Redis } from "ioredis";
import type { AckResult } from "./replica-acks.js";

interface Batch {
  socket: unknown;
  done: Promise<AckResult>;
}

/**
 * Confirms Cluster writes with WAIT on the connection to the master that took them: the writes
 * sent to one master in one turn of the event loop form its batch, and one WAIT sent after them
 * on that same connection (in the check phase, behind the corked scripts) acknowledges them all.
 * Before the WAIT goes a SET of a mark key in the slot of the batch's first write: on Cluster a
 * PUBLISH does not enter the replication stream, and a read-only script moves no offset, yet may
 * report another connection's write; the mark moves this connection's offset past everything so far.
 */
export class ClusterAcks {
  private readonly batches = new Map<Redis, Batch>();

  constructor(
    private readonly timeoutMs: number,
    /** Prefix of the mark keys (one per hash tag, expiring in 10 s). */
    private readonly markPrefix: string,
    /** Told every WAIT's result, with the master and the connection it ran on. */
    private readonly onResult: (node: Redis, result: AckResult, socket: unknown) => void,
  ) {}

  /** Joins (or opens) `node`'s batch for this turn; `key` is a key of a slot the node owns. */
  join(node: Redis, key: string, wanted: number): Promise<AckResult> {
    const socket = node.stream;
    const open = this.batches.get(node);
    if (open && open.socket === socket) return open.done;
    const mark = `${this.markPrefix}:{${hashTag(key)}}`;
    const done = new Promise<AckResult>((resolve) => {
      setImmediate(() => {
        if (this.batches.get(node)?.done === done) this.batches.delete(node);
        resolve(this.sendWait(node, socket, mark, wanted));
      });
    });
    this.batches.set(node, { socket, done });
    return done;
  }

  private async sendWait(node: Redis, socket: unknown, mark: string, wanted: number): Promise<AckResult> {
    let result: AckResult = { ok: false, acked: 0, wanted };
    try {
      // A reconnect in between means the writes went to a connection this WAIT cannot speak for.
      if (node.stream === socket && node.status === "ready") {
        node.set(mark, "", "PX", 10_000).catch(() => {});
        const acked = Number(await node.wait(wanted, this.timeoutMs));
        result = { ok: acked >= wanted, acked, wanted };
      }
    } catch {
      // The connection failed: the writes' own replies fail too and say so.
    }
    this.onResult(node, result, socket);
    return result;
  }
}

/** The part of `key` Redis hashes to pick its slot: the first non-empty {tag}, else the whole key. */
function hashTag(key: string): string {
  const open = key.indexOf("{");
  const close = open < 0 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}
