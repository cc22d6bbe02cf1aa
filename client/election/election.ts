import { type ServiceError, status } from "@grpc/grpc-js";
import {
  type DescribeResponse,
  type Holder,
  HolderChange,
  type LockServiceClient,
  type WatchResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { holderKey } from "../../wire/holder-key.js";
import { errorFromStatus, readableDetails } from "../session/status-error.js";
import { TurnstileError } from "../turnstile-error.js";
import { type Leadership, toBytes } from "./leadership.js";
import { WatchStream } from "./watch-stream.js";

/** The current leader of an election, as observers see it. */
export interface Leader {
  sessionId: string;
  owner: string;
  /** The value it campaigned with, or proclaimed since. */
  value: Uint8Array;
  fencingToken: bigint;
}

/** Options of `Election.campaign`. */
export interface CampaignOptions {
  /** How long to wait in ms; absent (or Infinity) waits forever, 0 tries once. */
  waitMs?: number;
  /** Aborting stops the campaign: it rejects with `signal.reason` and leaves the queue. */
  signal?: AbortSignal;
  /**
   * Queue rank among the candidates, 0..100 (default 0): ahead of every lower priority, FIFO within one.
   * The leader is never pre-empted (docs/elections.md, the rolling-deploy recipe).
   */
  priority?: number;
  /**
   * Once queued, ask the leader to yield (a release request with this reason; `true`: "a candidate asks
   * to lead"). The leader decides: the recipe's leader hands over to the asking session.
   */
  askToYield?: boolean | string;
}

/** What an Election needs from its client. */
export interface ElectionDeps {
  /** The channel for the next Describe or Watch call (successive calls may rotate addresses). */
  rpc: () => LockServiceClient;
  /** Waits for the exclusive lock on the name with `value` attached, as a Leadership. */
  campaign(value: Uint8Array, options: CampaignOptions): Promise<Leadership>;
}

/** Delays between Watch attempts of `observe` after a break: from `first` ms, doubling, at most `max` ms (jittered). */
export const BACKOFF_MS = { first: 100, max: 2000 };

/**
 * Leader election on one lock name: candidates `campaign` (an exclusive acquire, first come first
 * elected), anyone can ask for the `leader()` or `observe()` every change of leader, including
 * `null` when there is none. Made by `TurnstileClient.election`.
 */
export class Election {
  /** The lock name the election runs on. */
  readonly name: string;
  readonly #deps: ElectionDeps;

  constructor(name: string, deps: ElectionDeps) {
    this.name = name;
    this.#deps = deps;
  }

  /**
   * Waits until this candidate is elected and resolves with its Leadership. Never resolves with a
   * leadership whose lease had already lapsed when the grant arrived (a "phantom leader": the
   * process paused past its lease while waiting): that rejects with the LostLockError, and the
   * server's hold is released. Rejects like `TurnstileClient.acquire` otherwise ('timeout',
   * 'busy' with `waitMs` 0, 'invalid-argument' for a value over the server's limit, ...).
   */
  async campaign(value: Uint8Array | string, options: CampaignOptions = {}): Promise<Leadership> {
    const leadership = await this.#deps.campaign(toBytes(value), options);
    // The grant was checked against the lease when it arrived; check again after the await.
    if (leadership.lost) throw leadership.signal.reason;
    return leadership;
  }

  /** The current leader (Describe), or null when nobody leads. Rejects with a TurnstileError. */
  leader(options: { signal?: AbortSignal } = {}): Promise<Leader | null> {
    const { signal } = options;
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const onAbort = () => call.cancel();
      const call = this.#deps.rpc().describe({ name: this.name }, (err: ServiceError | null, d: DescribeResponse) => {
        signal?.removeEventListener("abort", onAbort);
        if (signal?.aborted) reject(signal.reason);
        else if (err) {
          const { reason } = errorFromStatus({ code: err.code, details: err.details });
          reject(
            new TurnstileError(reason, `describe of "${this.name}" failed: ${readableDetails(err.details)}`, {
              cause: err,
            }),
          );
        } else resolve(leaderOf(d.holders));
      });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Every change of leader, starting with the current one: a Leader, or `null` when nobody leads
   * (the last leader resigned, expired or was revoked). A new value proclaimed by the leader is a
   * change too. Changes received together are reported as one (a direct hand-off shows as the new
   * leader, usually without a `null` before it). A broken Watch stream is resumed (with backoff) and the next item is the leader
   * at that moment, so leaders that came and went during the break are skipped. Breaking out of
   * the loop cancels the stream; aborting `signal` makes it throw `signal.reason`. Throws a
   * TurnstileError only for a bad name or a server without Watch.
   */
  async *observe(options: { signal?: AbortSignal } = {}): AsyncGenerator<Leader | null, void, undefined> {
    const { signal } = options;
    let last: Leader | null | undefined;
    let backoffMs = BACKOFF_MS.first;
    for (;;) {
      signal?.throwIfAborted();
      const stream = new WatchStream(this.#deps.rpc(), this.name);
      const holders = new Map<string, Holder>();
      try {
        for (;;) {
          // Changes already received are applied together: a hand-off (released, then acquired
          // in one store operation) should not show as a moment without a leader.
          apply(holders, await stream.next({ signal }));
          for (let more = stream.poll(); more; more = stream.poll()) apply(holders, more);
          backoffMs = BACKOFF_MS.first;
          const leader = leaderOf([...holders.values()]);
          if (last !== undefined && sameLeader(last, leader)) continue;
          last = leader;
          yield leader;
        }
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (!retryable(error)) throw error;
      } finally {
        stream.cancel();
      }
      await sleep(backoffMs * (0.5 + Math.random() / 2), signal);
      backoffMs = Math.min(backoffMs * 2, BACKOFF_MS.max);
    }
  }
}

/** Applies one Watch message to the holders it tracks (by session and owner). */
function apply(holders: Map<string, Holder>, response: WatchResponse): void {
  const kind = response.kind;
  if (kind?.$case === "snapshot") {
    holders.clear();
    for (const h of kind.snapshot.holders) holders.set(holderKey(h.sessionId, h.owner), h);
  } else if (kind?.$case === "event" && kind.event.holder) {
    const { change, holder, noHolder } = kind.event;
    if (change === HolderChange.HOLDER_CHANGE_TRANSFERRED) {
      // One change, old → new: never a moment without a leader.
      if (kind.event.from) holders.delete(holderKey(kind.event.from.sessionId, kind.event.from.owner));
      holders.set(holderKey(holder.sessionId, holder.owner), holder);
    } else if (change === HolderChange.HOLDER_CHANGE_ACQUIRED || change === HolderChange.HOLDER_CHANGE_VALUE) {
      holders.set(holderKey(holder.sessionId, holder.owner), holder);
    } else {
      holders.delete(holderKey(holder.sessionId, holder.owner));
    }
    if (noHolder) holders.clear();
  }
}

/** The holder with the smallest token (an election's lock has one), or null. */
function leaderOf(holders: Holder[]): Leader | null {
  const first = holders.reduce<Holder | undefined>((a, h) => (a && a.fencingToken < h.fencingToken ? a : h), undefined);
  if (!first) return null;
  const { sessionId, owner, value, fencingToken } = first;
  return { sessionId, owner, value: new Uint8Array(value), fencingToken };
}

function sameLeader(a: Leader | null, b: Leader | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.fencingToken === b.fencingToken &&
    a.sessionId === b.sessionId &&
    a.owner === b.owner &&
    Buffer.from(a.value).equals(Buffer.from(b.value))
  );
}

// A bad name will stay bad, and a server without Watch will not grow one: give up on those.
function retryable(error: unknown): boolean {
  if (!(error instanceof TurnstileError)) return false;
  const code = (error.cause as { code?: number } | undefined)?.code;
  return error.reason !== "invalid-argument" && code !== status.UNIMPLEMENTED;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
