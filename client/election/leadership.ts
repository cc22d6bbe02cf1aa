import type { Lock } from "../locks/lock.js";
import type { Session } from "../session/session.js";
import { errorFromFailed, TurnstileError } from "../turnstile-error.js";

/**
 * Leadership of an election: the exclusive Lock on the election's name, with the value observers
 * see. `signal` aborts (with a LostLockError) before anyone else could be elected; `fencingToken`
 * is strictly greater than every earlier leader's, so a resource that refuses smaller tokens is
 * safe from a leader that paused past its lease. Made by `Election.campaign`.
 */
export class Leadership implements AsyncDisposable {
  /** The lock the leadership is. */
  readonly lock: Lock;
  readonly #session: Pick<Session, "request">;
  #value: Uint8Array;

  /** Wraps a lock granted on `session`; only Election creates leaderships. */
  constructor(lock: Lock, value: Uint8Array, session: Pick<Session, "request">) {
    this.lock = lock;
    this.#value = value;
    this.#session = session;
  }

  /** The election's name. */
  get name(): string {
    return this.lock.name;
  }

  /** Strictly greater than every earlier leader's token; pass it to fenced resources. */
  get fencingToken(): bigint {
    return this.lock.fencingToken;
  }

  /** Aborts when leadership ends: LostLockError when lost, AbortError on resign. */
  get signal(): AbortSignal {
    return this.lock.signal;
  }

  /** True once leadership was lost (not when resigned). */
  get lost(): boolean {
    return this.lock.lost;
  }

  /** Ms until this client could no longer confirm its lease; 0 once leadership ended. */
  get leaseRemainingMs(): number {
    return this.lock.leaseRemainingMs;
  }

  /** The value observers see: the campaign's, or the last one proclaimed. */
  get value(): Uint8Array {
    return this.#value;
  }

  /**
   * Replaces the value observers see (a leader announcing a new address, say). Rejects with the
   * LostLockError when leadership was lost, TurnstileError 'not-held' after resigning (or when the
   * server no longer counts the hold), 'invalid-argument' for a value over the server's limit
   * (default 4096 bytes), and `signal.reason` on abort.
   */
  async proclaim(value: Uint8Array | string, options: { signal?: AbortSignal } = {}): Promise<void> {
    const bytes = toBytes(value);
    if (this.lock.lost) throw this.lock.signal.reason;
    if (this.lock.leaseRemainingMs === 0) {
      throw new TurnstileError("not-held", `leadership of "${this.name}" was resigned`);
    }
    const { name, owner } = this.lock;
    const wire = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const answer = await this.#session.request(
      (requestId) => ({ $case: "proclaim", proclaim: { requestId, name, owner, value: wire } }),
      options,
    );
    if (answer.$case === "failed") throw errorFromFailed(answer.failed);
    this.#value = bytes;
  }

  /**
   * Aborts when someone asks this leader to yield (a candidate's `askToYield`, `turnstile ask-release`);
   * its reason is the ReleaseRequest, whose `sessionId` names an asking candidate for `handOver`.
   */
  get releaseRequested(): AbortSignal {
    return this.lock.releaseRequested;
  }

  /**
   * Hands leadership to a waiting candidate in one step (see `Lock.transfer`): `to` absent, the next
   * candidate in line; a session id (a release request's `sessionId`), that session's candidate. There is
   * never a moment without a leader, and the successor's fencing token is higher. Rejects with
   * TurnstileError 'not-found' naming the candidates that do wait when `to` is not one of them.
   */
  handOver(to?: string | { sessionId: string; owner?: string }, options: { signal?: AbortSignal } = {}) {
    return this.lock.transfer(to, options);
  }

  /** Gives leadership up: the next candidate is elected at once. Idempotent (see `Lock.release`). */
  resign(options: { signal?: AbortSignal } = {}): Promise<void> {
    return this.lock.release(options);
  }

  /** Resigns at the end of an `await using` block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.resign();
  }
}

/** A campaign or proclaim value as bytes: strings are UTF-8. */
export function toBytes(value: Uint8Array | string): Uint8Array {
  return typeof value === "string" ? new TextEncoder().encode(value) : value;
}
