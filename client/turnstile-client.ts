import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { hostname } from "node:os";
import type { ServiceError } from "@grpc/grpc-js";
import {
  type CheckFenceResponse,
  FenceStatus,
  LockMode,
  type LockServiceClient,
} from "../gen/ts/turnstile/v1/turnstile.js";
import { Backoff, type BackoffOptions } from "./connection/backoff.js";
import { channelCredentials } from "./connection/channel-credentials.js";
import { ChannelPool } from "./connection/channel-pool.js";
import { type CampaignOptions, Election } from "./election/election.js";
import { Leadership } from "./election/leadership.js";
import type { Lock } from "./locks/lock.js";
import { LockAcquirer } from "./locks/lock-acquirer.js";
import { LockSet } from "./locks/lock-set.js";
import { OwnerScope } from "./locks/owner-scope.js";
import { ReadWriteLock } from "./locks/read-write-lock.js";
import { Semaphore } from "./locks/semaphore.js";
import { raceSignal } from "./race-signal.js";
import { sessionAcquire } from "./session/requests/acquires-in-flight.js";
import { type LockClaimInput, sessionSetAcquire } from "./session/requests/set-acquires-in-flight.js";
import { Session } from "./session/session.js";
import { errorFromStatus, readableDetails } from "./session/status-error.js";
import type { TurnstileClientEvents, TurnstileClientState } from "./turnstile-client-events.js";
import type { AcquireOptions, TryAcquireOptions, TurnstileClientOptions } from "./turnstile-client-options.js";
import { errorFromFailed, TurnstileError } from "./turnstile-error.js";

const DEFAULT_TTL_MS = 15_000;

/**
 * The Turnstile client: one session at a time, opened lazily on one of the coordinator addresses
 * (one gRPC channel per address). A broken stream is resumed on the next address with the locks
 * kept (docs/sessions.md); events report it (TurnstileClientEvents). If the session ends or
 * expires (its locks are then lost), the next call opens a fresh one; after `close()` every call
 * rejects with reason 'session-ended'.
 */
export class TurnstileClient extends EventEmitter<TurnstileClientEvents> {
  readonly #channels: ChannelPool;
  #callCount = 0;
  readonly #backoff: BackoffOptions | undefined;
  readonly #ttlMs: number;
  readonly #clientName: string;
  readonly #safetyMarginMs: number | undefined;
  readonly #openTimeoutMs: number | undefined;
  readonly #maxRequestBytes: number | undefined;
  #session: Session | undefined;
  #closing: Promise<void> | undefined;
  readonly #scope: OwnerScope;

  /**
   * Takes one coordinator address (host:port) or a list tried in turn, without connecting; throws a
   * TurnstileError ('invalid-argument') on bad options.
   */
  constructor(address: string | readonly string[], options: TurnstileClientOptions = {}) {
    super();
    const { ttlMs = DEFAULT_TTL_MS, safetyMarginMs } = options;
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
      throw new TurnstileError("invalid-argument", `ttlMs must be a positive number, got ${ttlMs}`);
    }
    if (safetyMarginMs !== undefined && !(safetyMarginMs >= 0 && safetyMarginMs < ttlMs)) {
      const message = `safetyMarginMs must be in [0, ttlMs), got ${safetyMarginMs}`;
      throw new TurnstileError("invalid-argument", message);
    }
    const { openTimeoutMs } = options;
    if (openTimeoutMs !== undefined && !(Number.isFinite(openTimeoutMs) && openTimeoutMs > 0)) {
      throw new TurnstileError("invalid-argument", `openTimeoutMs must be a positive number, got ${openTimeoutMs}`);
    }
    this.#openTimeoutMs = openTimeoutMs;
    const { maxRequestBytes } = options;
    if (maxRequestBytes !== undefined && !(Number.isInteger(maxRequestBytes) && maxRequestBytes > 0)) {
      throw new TurnstileError(
        "invalid-argument",
        `maxRequestBytes must be a positive integer, got ${maxRequestBytes}`,
      );
    }
    this.#maxRequestBytes = maxRequestBytes;
    this.#ttlMs = ttlMs;
    this.#safetyMarginMs = safetyMarginMs;
    this.#clientName = options.clientName ?? `${hostname()}/${process.pid}`;
    new Backoff(options.backoff); // validates the options
    this.#backoff = options.backoff;
    this.#channels = new ChannelPool(address, channelCredentials(options));
    this.#scope = new OwnerScope(options.ownersFollowScope ?? true);
  }

  /**
   * Where the client is: 'idle' (no session), 'connecting', 'connected', 'reconnecting' (locks
   * valid by their local lease), 'expired' (the session was lost; the next call opens a new one),
   * or 'closed'.
   */
  get state(): TurnstileClientState {
    if (this.#closing !== undefined) return "closed";
    const state = this.#session?.state;
    return state === undefined || state === "ended" ? "idle" : state;
  }

  /** The id of the current session; empty before the first one opened. */
  get sessionId(): string {
    return this.#session?.sessionId ?? "";
  }

  /**
   * Opens the session now instead of at the first acquire, trying each address once. Rejects with a
   * TurnstileError ('connection', ...) when none answers, or with `signal.reason` on abort.
   */
  async connect(options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.#currentSession().open(options);
  }

  /**
   * Waits for the exclusive lock `name` and resolves with its Lock. Rejects with a TurnstileError:
   * 'timeout' when `waitMs` runs out, 'busy' when `waitMs` is 0 and the lock is taken, 'lost' if
   * the lease ran out before the grant arrived, 'expired' if the server let the queue entry lapse
   * (keepalives did not arrive), others as the server says; on abort it rejects
   * with `signal.reason` and withdraws the request (a grant that crosses the abort is released).
   */
  acquire(name: string, options: AcquireOptions = {}): Promise<Lock> {
    return this.#acquire(name, LockMode.LOCK_MODE_EXCLUSIVE, 0, options);
  }

  /**
   * Tries the lock once: resolves with its Lock, or null when someone else holds it. Rejects like
   * `acquire` for every other failure.
   */
  async tryAcquire(name: string, options: TryAcquireOptions = {}): Promise<Lock | null> {
    return this.#acquirer(name, LockMode.LOCK_MODE_EXCLUSIVE, 0).tryAcquire(options);
  }

  /**
   * Acquires `name`, runs `fn` with the Lock and releases it in finally, returning what `fn`
   * returns. `fn` should watch `lock.signal`; an error from `fn` wins over one from the release.
   */
  async withLock<T>(name: string, fn: (lock: Lock) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    return this.#acquirer(name, LockMode.LOCK_MODE_EXCLUSIVE, 0).withLock(fn, options);
  }

  /**
   * Waits for every lock of `claims` (names, or `{ name, mode, limit }`) and resolves with the set,
   * granted all together with one fencing token per name, or not at all: while it waits it holds none
   * of them (docs/multi-lock.md). Rejects like `acquire`; a `timeout` names in `blockedBy` the holders
   * of every name it waited for (Blocker.name). On abort it withdraws the whole set; a grant that
   * crosses the abort is released, every lock of it. `lockDelayMs` is every hold's lock-delay.
   */
  async acquireAll(claims: readonly LockClaimInput[], options: AcquireOptions = {}): Promise<LockSet> {
    const request = sessionSetAcquire(claims, this.#scope.ownerFor(options));
    return new LockSet(await this.#currentSession().acquireAll(request, { signal: options.signal }));
  }

  /**
   * Acquires every lock of `claims` (see `acquireAll`), runs `fn` with the set and releases it in
   * finally, returning what `fn` returns. `fn` should watch `set.signal`; an error from `fn` wins.
   * `fn` runs in the scope of the set's owner: acquires it makes without an owner take that one.
   */
  async withLocks<T>(
    claims: readonly LockClaimInput[],
    fn: (set: LockSet) => Promise<T> | T,
    options: AcquireOptions = {},
  ): Promise<T> {
    const set = await this.acquireAll(claims, options);
    let result: T;
    try {
      result = await this.#scope.run(set.locks[0].owner, () => fn(set));
    } catch (error) {
      await set.release().catch(() => {});
      throw error;
    }
    await set.release();
    return result;
  }

  /**
   * Runs `fn` as one unit of work: acquires it makes (here and in every continuation it starts)
   * without an `owner` of their own take `owner` (default: a fresh one), so its locks are one
   * (session, owner) — re-entry and deadlock detection see them together (docs/deadlocks.md). Inside
   * a `withLock`/`withLocks` callback that already happens with the held lock's owner. A no-op scope
   * with `ownersFollowScope: false`.
   */
  withOwner<T>(fn: () => Promise<T> | T, options: { owner?: string } = {}): Promise<T> {
    const owner = options.owner ?? randomUUID();
    if (typeof owner !== "string") {
      return Promise.reject(new TurnstileError("invalid-argument", "owner: expected a string"));
    }
    return this.#scope.run(owner, async () => fn());
  }

  /**
   * A counting semaphore on `name`: at most `limit` holders at once (see Semaphore). Throws
   * TurnstileError 'invalid-argument' unless `limit` is an integer from 1 to 2^32 - 1; the server
   * checks it against its own maximum at the first acquire.
   */
  semaphore(name: string, limit: number): Semaphore {
    return new Semaphore(name, limit, this.#acquirer(name, LockMode.LOCK_MODE_SHARED, limit));
  }

  /** A read-write lock on `name`: shared readers (no limit) and exclusive writers, one FIFO. */
  readWriteLock(name: string): ReadWriteLock {
    const readers = this.#acquirer(name, LockMode.LOCK_MODE_SHARED, 0);
    return new ReadWriteLock(name, readers, this.#acquirer(name, LockMode.LOCK_MODE_EXCLUSIVE, 0));
  }

  /**
   * Leader election on `name` (see Election): `campaign(value)` waits to be elected, `leader()`
   * and `observe()` tell who leads. The lock is an ordinary exclusive lock on `name`.
   */
  election(name: string): Election {
    return new Election(name, {
      rpc: () => this.#nextChannel(),
      campaign: async (value: Uint8Array, options: CampaignOptions) => {
        const session = this.#currentSession();
        const { askToYield, ...acquire } = options;
        let asked = false;
        // Asked once, when first queued: a candidate elected at once has nobody to ask.
        const onQueued = () => {
          if (askToYield === undefined || askToYield === false || asked) return;
          asked = true;
          const reason = askToYield === true ? "a candidate asks to lead" : askToYield;
          this.requestRelease(name, { reason }).catch(() => {});
        };
        const lock = await this.#acquire(
          name,
          LockMode.LOCK_MODE_EXCLUSIVE,
          0,
          { ...acquire, value, onQueued },
          session,
        );
        return new Leadership(lock, value, session);
      },
    });
  }

  /**
   * Asks every holder of `name` to let go (RequestRelease, as this client's session): each holder's client
   * is told (`Lock.releaseRequested`, the `releaseRequested` event); nothing is enforced. Resolves with how
   * many holders were asked; rejects with TurnstileError 'not-found' when nobody holds the lock,
   * 'invalid-argument' for a reason over 256 bytes, 'permission-denied' without the lock grant on the name,
   * 'connection' while the session reconnects or when its stream breaks before the answer (retry).
   */
  async requestRelease(name: string, options: { reason?: string; signal?: AbortSignal } = {}): Promise<number> {
    const session = this.#currentSession();
    await session.open({ signal: options.signal });
    const reason = options.reason ?? "";
    const answer = await session.request(
      (requestId) => ({ $case: "requestRelease", requestRelease: { requestId, name, reason } }),
      { signal: options.signal },
    );
    if (answer.$case === "failed") throw errorFromFailed(answer.failed);
    if (answer.$case !== "releaseRequestSent")
      throw new TurnstileError("internal", `requestRelease answered ${answer.$case}`);
    return answer.releaseRequestSent.holders;
  }

  /**
   * Closes the session (held locks are lost with 'session-ended', the server releases them,
   * pending acquires reject with 'session-ended') and then the channels. While reconnecting it just
   * stops: the server releases the locks when their lease runs out. Idempotent; on abort it cancels
   * the stream and rejects with `signal.reason`.
   */
  async close(options: { signal?: AbortSignal } = {}): Promise<void> {
    this.#closing ??= this.#closeOnce(options.signal);
    await raceSignal(this.#closing, options.signal);
  }

  async #closeOnce(signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.#session?.close({ signal });
    } finally {
      this.#channels.close();
      this.emit("closed");
    }
  }

  #acquirer(name: string, mode: LockMode, limit: number): LockAcquirer {
    return new LockAcquirer((options) => this.#acquire(name, mode, limit, options), this.#scope);
  }

  // Not async: the session's promise is handed back as is, with no layers of its own (a throw
  // here still becomes a rejection).
  #acquire(name: string, mode: LockMode, limit: number, options: AcquireOptions, session?: Session): Promise<Lock> {
    try {
      const to = session ?? this.#currentSession();
      return to.acquire(sessionAcquire(name, mode, limit, this.#scope.ownerFor(options)), { signal: options.signal });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Asks the coordinator whether `fencingToken` is still current for `name` (CheckFence, authorized
   * as `read`), for a resource about to take an irreversible step: "current" (a live hold has it),
   * "superseded" (a live hold has `newerFencingToken`), or "unknown" (no live hold has it or a newer
   * one: act as if it were not current). Rejects with a TurnstileError.
   */
  checkFence(name: string, fencingToken: bigint, options: { signal?: AbortSignal } = {}): Promise<FenceCheck> {
    const { signal } = options;
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const onAbort = () => call.cancel();
      const call = this.#nextChannel().checkFence(
        { name, fencingToken },
        (err: ServiceError | null, r: CheckFenceResponse) => {
          signal?.removeEventListener("abort", onAbort);
          if (signal?.aborted) return reject(signal.reason);
          if (!err) return resolve(fenceCheckOf(r));
          const { reason } = errorFromStatus({ code: err.code, details: err.details });
          reject(
            new TurnstileError(reason, `checkFence of "${name}" failed: ${readableDetails(err.details)}`, {
              cause: err,
            }),
          );
        },
      );
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** A channel for calls outside the session (Describe, Watch): the addresses in turn. */
  #nextChannel(): LockServiceClient {
    return this.#channels.channel(this.#channels.addressAt(this.#callCount++));
  }

  #currentSession(): Session {
    if (this.#closing !== undefined) {
      throw new TurnstileError("session-ended", "the client is closed");
    }
    if (this.#session === undefined || this.#session.ended) {
      this.#session = new Session(this.#channels, {
        ttlMs: this.#ttlMs,
        clientName: this.#clientName,
        safetyMarginMs: this.#safetyMarginMs,
        backoff: this.#backoff,
        openTimeoutMs: this.#openTimeoutMs,
        maxRequestBytes: this.#maxRequestBytes,
        onEvent: (event) => this.emit(event.type, event),
        onReleaseRequested: (request) => this.emit("releaseRequested", request),
      });
    }
    return this.#session;
  }
}

/** CheckFence's answer: `newerFencingToken` is set with "superseded". */
export interface FenceCheck {
  status: "current" | "superseded" | "unknown";
  newerFencingToken?: bigint;
}

function fenceCheckOf(r: CheckFenceResponse): FenceCheck {
  if (r.status === FenceStatus.FENCE_STATUS_CURRENT) return { status: "current" };
  if (r.status === FenceStatus.FENCE_STATUS_SUPERSEDED)
    return { status: "superseded", newerFencingToken: r.newerFencingToken };
  return { status: "unknown" };
}
