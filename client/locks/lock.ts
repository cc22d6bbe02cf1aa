import type { LostLockError } from "../lost-lock-error.js";
import { raceSignal } from "../race-signal.js";
import { TurnstileError } from "../turnstile-error.js";
import type { ReleaseRequest } from "./release-request.js";

/** What a Lock needs from its session: a way to send its release and to re-check leases. */
export interface LockReleaser {
  /**
   * Sends the release of one hold and resolves when the server answered; resolves quietly when
   * the hold is already gone (lost, session ended) and rejects with a TurnstileError otherwise.
   */
  releaseLock(lock: Lock): Promise<void>;
  /** Loses, synchronously, every lock whose lease deadline has passed on the monotonic clock. */
  checkLeases(): void;
  /** Milliseconds left of the lock's local lease, or undefined once it is not held. */
  leaseRemainingMs(lock: Lock): number | undefined;
  /** Sends a Transfer of the lock's hold to `to` and resolves with the successor once it holds. */
  transferLock(lock: Lock, to: { sessionId: string; owner: string }, signal?: AbortSignal): Promise<Successor>;
}

/** Who holds a lock after `Lock.transfer`: the successor's session and owner, and its (higher) fencing token. */
export interface Successor {
  sessionId: string;
  owner: string;
  fencingToken: bigint;
}

function ignore(): void {}

/** The grant a Lock handle stands for, as the server reported it. */
export interface LockGrant {
  name: string;
  owner: string;
  fencingToken: bigint;
  holdCount: number;
  /** The signed fencing proof ("" when the coordinator has no fencing key). */
  fencingProof: string;
}

/**
 * One hold of a lock. `signal` aborts with a LostLockError before the server could grant the lock
 * to anyone else (lease unconfirmed, expired, revoked, session ended), and with an AbortError when
 * this handle is released. Release it once with `release()` or `await using`.
 */
export class Lock implements AsyncDisposable {
  /** The lock's name. */
  readonly name: string;
  /** The reentrancy key: handles with the same owner in one session share one holder. */
  readonly owner: string;
  /** Strictly greater than every token issued before for this name; pass it to fenced resources. */
  readonly fencingToken: bigint;
  /** The holder's hold count when this handle was granted (1 for a first acquire). */
  readonly holdCount: number;
  /**
   * The grant's signed fencing proof (a compact JWS binding lock, token and holder; docs/fencing.md),
   * for resources that verify it (verifyFencingProof, RedisFenceGuard, PostgresFenceGuard); "" when
   * the coordinator runs without `--fencing-key`.
   */
  readonly fencingProof: string;
  readonly #releaser: LockReleaser;
  // Created on first read of `signal`: most handles are released without anyone listening, and an
  // AbortController plus its abort reason cost more than the rest of a lock cycle in the client.
  #controller: AbortController | undefined;
  #lostError: LostLockError | undefined;
  #state: "held" | "released" | "lost" = "held";
  #released: Promise<void> | undefined;
  #handedOver = false;
  #requests: AbortController | undefined;
  #request: ReleaseRequest | undefined;

  /** Creates a held handle; only the session creates locks. */
  constructor(grant: LockGrant, releaser: LockReleaser) {
    this.name = grant.name;
    this.owner = grant.owner;
    this.fencingToken = grant.fencingToken;
    this.holdCount = grant.holdCount;
    this.fencingProof = grant.fencingProof;
    this.#releaser = releaser;
  }

  /**
   * Aborts when this handle stops holding the lock: with a LostLockError when it is lost, with an
   * AbortError when released. Reading it re-checks the lease, so a stalled event loop cannot hide
   * an expiry.
   */
  get signal(): AbortSignal {
    this.#releaser.checkLeases();
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#state !== "held") this.#controller.abort(this.#abortReason());
    }
    return this.#controller.signal;
  }

  /**
   * Milliseconds until this client can no longer confirm the lease (the lock is then lost), as
   * judged now on the monotonic clock; 0 once the handle is released or lost (never NaN or negative).
   */
  get leaseRemainingMs(): number {
    this.#releaser.checkLeases();
    const remainingMs = this.#state === "held" ? this.#releaser.leaseRemainingMs(this) : undefined;
    return remainingMs === undefined ? 0 : Math.max(0, remainingMs);
  }

  /** True once the lock was lost (not when it was released); reading it re-checks the lease. */
  get lost(): boolean {
    this.#releaser.checkLeases();
    return this.#state === "lost";
  }

  /**
   * Drops this handle's hold: aborts `signal`, then sends the release and waits for the answer.
   * Idempotent, and resolves quietly when the lock is already lost or released; aborting `signal`
   * stops the waiting, not the release. Rejects with a TurnstileError if the server refuses.
   */
  async release(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (this.#state === "held") {
      options.signal?.throwIfAborted();
      this.#state = "released";
      const controller = this.#controller;
      if (controller === undefined) {
        // Nobody read `signal`: there is no one to tell first, so no promise stands in for the release.
        this.#released = this.#releaser.releaseLock(this);
      } else {
        let sendRelease: (sent: Promise<void>) => void = ignore;
        this.#released = new Promise<void>((resolve) => {
          sendRelease = resolve;
        });
        // Told first: the signal aborts before the release lets the server grant to someone else.
        controller.abort(this.#abortReason());
        sendRelease(this.#releaser.releaseLock(this));
      }
      this.#released.catch(ignore);
    }
    if (this.#released !== undefined) await raceSignal(this.#released, options.signal);
  }

  /**
   * Aborts when someone asks this holder to let go (RequestRelease, `turnstile ask-release`): its reason is
   * the latest ReleaseRequest. Nothing is enforced: the holder decides whether to release or `transfer`.
   */
  get releaseRequested(): AbortSignal {
    if (this.#requests === undefined) {
      this.#requests = new AbortController();
      if (this.#request !== undefined) this.#requests.abort(this.#request);
    }
    return this.#requests.signal;
  }

  /**
   * Hands this holder's hold (every handle of it) to a waiting (session, owner) in one step: the successor
   * holds with a new, higher fencing token and the lock is never without a holder (docs/elections.md).
   * `to` absent: the head of the queue; a session id alone: that session's first waiter. Resolves with
   * the successor once the server made the transfer; then `signal` aborts (AbortError) as on release.
   * Stop using the guarded resource before calling it: the successor may act before this resolves (its
   * token fences this holder's). Rejects with TurnstileError 'not-found' (naming who does wait),
   * 'not-held', 'conflict' (a shared hold), or the LostLockError once lost.
   */
  async transfer(to?: string | { sessionId: string; owner?: string }, options: { signal?: AbortSignal } = {}) {
    this.#releaser.checkLeases();
    if (this.#state === "lost") throw this.#lostError;
    if (this.#state === "released") throw new TurnstileError("not-held", `lock "${this.name}" was released`);
    const target = typeof to === "string" ? { sessionId: to, owner: "" } : { sessionId: "", owner: "", ...to };
    return this.#releaser.transferLock(
      this,
      { sessionId: target.sessionId, owner: target.owner ?? "" },
      options.signal,
    );
  }

  /** Ends the handle as released because its holder handed the hold over. Internal: called by the session. */
  markHandedOver(): void {
    if (this.#state !== "held") return;
    this.#state = "released";
    this.#handedOver = true;
    this.#controller?.abort(this.#abortReason());
  }

  /** Notes a release request and aborts `releaseRequested`. Internal: called by the session. */
  markReleaseRequested(request: ReleaseRequest): void {
    if (this.#state !== "held") return;
    this.#request = request;
    this.#requests?.abort(request);
  }

  /** Releases the lock at the end of an `await using` block (see `release`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  /**
   * Marks the handle lost and aborts its signal with `error`. Returns false (and does nothing)
   * when the handle was already released or lost. Internal: called by the session.
   */
  markLost(error: LostLockError): boolean {
    if (this.#state !== "held") return false;
    this.#state = "lost";
    this.#lostError = error;
    this.#controller?.abort(error);
    return true;
  }

  #abortReason(): unknown {
    const how = this.#handedOver ? "handed over" : "released";
    return this.#lostError ?? new DOMException(`lock "${this.name}" was ${how}`, "AbortError");
  }
}
