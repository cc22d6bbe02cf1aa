import type { Opened, SessionRequest, SessionResponse } from "../../gen/ts/turnstile/v1/turnstile.js";
import { msFromDuration } from "../../wire/duration.js";
import type { ChannelPool } from "../connection/channel-pool.js";
import { HeldLocks, type Holding } from "../locks/held-locks.js";
import { LeaseClock } from "../locks/lease-clock.js";
import type { Lock, LockReleaser } from "../locks/lock.js";
import { releaseRequestOf } from "../locks/release-request.js";
import { type LongTimeout, setLongTimeout } from "../long-timeout.js";
import type { LostLockReason } from "../lost-lock-error.js";
import { raceSignal } from "../race-signal.js";
import { TurnstileError } from "../turnstile-error.js";
import { KeepAlive } from "./keep-alive.js";
import { ANSWER_GRACE_MS, giveUpAtMs } from "./requests/acquire-deadlines.js";
import type { SessionAcquire } from "./requests/acquires-in-flight.js";
import type { SessionSetAcquire } from "./requests/set-acquires-in-flight.js";

/** What opening the session for an acquire needs of it: its name(s) and wait, for the timeout message. */
type Waited = Pick<SessionAcquire, "name" | "waitMs">;

import { SessionRequests } from "./requests/session-requests.js";
import type { SessionEvent, SessionState } from "./session-event.js";
import { SessionLink } from "./session-link.js";
import { SessionOpening } from "./session-opening.js";
import type { SessionOptions } from "./session-options.js";
import { SessionResumer } from "./session-resume.js";
import { decideStreamEnd, expiryError, type FinalStatus } from "./stream-end.js";
import { CLIENT_RECEIVED, CLIENT_SENT } from "./wire-marks.js";

export type { SessionEvent, SessionState } from "./session-event.js";

/**
 * One session: it survives broken streams. It opens a stream, sends a keepalive every ttl/3 and
 * routes answers by request id; when a stream breaks it reconnects over the coordinator addresses
 * and resumes (docs/sessions.md), keeping held locks (valid by the local lease meanwhile), pending
 * acquires and releases in flight. It ends on close, when the session expired, or on a fatal status.
 */
export class Session {
  readonly #channels: ChannelPool;
  readonly #options: SessionOptions;
  readonly #clock: LeaseClock<Holding>;
  readonly #held: HeldLocks;
  readonly #requests: SessionRequests;
  readonly #keepAlive: KeepAlive;
  readonly #link: SessionLink;
  readonly #opening: SessionOpening;
  readonly #resumer: SessionResumer;
  #state: SessionState = "connecting";
  #opened: Promise<void> | undefined;
  #openWaiter: { resolve: () => void; reject: (error: Error) => void } | undefined;
  #ended: TurnstileError | undefined;

  constructor(channels: ChannelPool, options: SessionOptions) {
    this.#channels = channels;
    this.#options = options;
    const { ttlMs, safetyMarginMs, now } = options;
    this.#clock = new LeaseClock({ ttlMs, safetyMarginMs, now });
    const send = (kind: SessionRequest["kind"]) => this.#send(kind);
    // What every Lock handle of this session calls back into.
    const releaser: LockReleaser = {
      releaseLock: (lock) => this.#requests.release(lock),
      checkLeases: () => held.sweep(),
      leaseRemainingMs: (lock) => held.remainingMs(lock),
      transferLock: async (lock, to, signal) => {
        const {
          toSessionId: sessionId,
          toOwner: owner,
          fencingToken,
        } = await this.#requests.transfer(lock, to, signal);
        return { sessionId, owner, fencingToken };
      },
    };
    const held = new HeldLocks(this.#clock, releaser, (lock) => this.#requests.releaseQuietly(lock));
    this.#held = held;
    this.#requests = new SessionRequests({ held, now: this.#clock.now, send, ended: () => this.#ended });
    const keepAlive = (seq: bigint) => this.#send({ $case: "keepAlive", keepAlive: { seq } });
    this.#keepAlive = new KeepAlive(this.#clock, keepAlive, () => held.rearm());
    const { acquires, releases, sets } = this.#requests;
    const resumer = new SessionResumer({ held, acquires, releases, sets, send });
    this.#resumer = resumer;
    this.#opening = new SessionOpening(options, () => resumer.claim());
    const { backoff, random, openTimeoutMs, maxRequestBytes } = options;
    const linkOptions = { backoff, random, now: this.#clock.now, openTimeoutMs, maxRequestBytes };
    this.#link = new SessionLink(channels, linkOptions, {
      open: () => this.#opening.openMessage(),
      opened: (opened, attempt) => this.#onOpened(opened, attempt.openSentAtMs),
      message: (message) => this.#onMessage(message),
      ended: (error, final, wasOpened) => this.#onStreamEnd(error, final, wasOpened),
      unencodable: (kind, error) => this.#requests.refuse(kind, error),
    });
  }

  /** The server's id for this session; empty until opened. */
  get sessionId(): string {
    return this.#opening.sessionId;
  }

  /** Where the session is (see SessionState). */
  get state(): SessionState {
    return this.#state;
  }

  /** True once the session is over (closed, expired or failed); it then accepts no more requests. */
  get ended(): boolean {
    return this.#ended !== undefined;
  }

  /**
   * Starts connecting on first call and resolves once a coordinator answered `opened`. Rejects with
   * a TurnstileError when the session ends first (no address answered, or a fatal status), or with
   * `signal.reason` (opening goes on).
   */
  open(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (this.#ended !== undefined) return Promise.reject(this.#ended);
    if (this.#opened === undefined) {
      this.#opened = new Promise<void>((resolve, reject) => {
        this.#openWaiter = { resolve, reject };
      });
      this.#opened.catch(() => {});
      this.#link.connect("now");
    }
    return raceSignal(this.#opened, options.signal);
  }

  /**
   * Sends an acquire and resolves with the granted Lock; across a reconnect it is re-sent with its
   * request id and what is left of its wait. Rejects with a TurnstileError for a `failed` answer,
   * a wait that ran out while reconnecting ('timeout') or the end of the session, with a
   * LostLockError when the lease had already run out at grant time, and with `signal.reason` on
   * abort (cancelling, or releasing a late grant). With a finite wait it ends by the wait plus
   * ANSWER_GRACE_MS however dead the link or stalled the store: then 'timeout', and withdrawn (or
   * 'connection' when the session never opened).
   */
  async acquire(request: SessionAcquire, options: { signal?: AbortSignal } = {}): Promise<Lock> {
    const { signal } = options;
    const giveUpAt = giveUpAtMs(request.waitMs, this.#clock.now());
    // Open already: nothing to wait for (the abort and end checks below still run).
    if (this.#state !== "connected") await this.#openBy(giveUpAt, request, signal);
    signal?.throwIfAborted();
    if (this.#ended !== undefined) throw this.#ended;
    // Awaited: returning the promise from an async function would cost two more turns per acquire.
    return await this.#requests.acquire(request, giveUpAt, signal);
  }

  /**
   * Sends an AcquireAll and resolves with one Lock per name, granted together; re-sent across a
   * reconnect, ended by its wait and aborted as `acquire` is (a grant that crosses an abort is released).
   */
  async acquireAll(request: SessionSetAcquire, options: { signal?: AbortSignal } = {}): Promise<Lock[]> {
    const { signal } = options;
    const giveUpAt = giveUpAtMs(request.waitMs, this.#clock.now());
    await this.#openBy(giveUpAt, request, signal);
    signal?.throwIfAborted();
    if (this.#ended !== undefined) throw this.#ended;
    return this.#requests.acquireAll(request, giveUpAt, signal);
  }

  /** Opens the session; a first acquire with a finite wait stops waiting for that at its give-up time. */
  #openBy(giveUpAt: number, request: Waited, signal: AbortSignal | undefined): Promise<void> {
    // Not async: an open session's acquire takes the open promise as is, with no layer of its own.
    if (giveUpAt === Number.POSITIVE_INFINITY || this.#state !== "connecting") return this.open({ signal });
    return this.#openWithin(giveUpAt, request, signal);
  }

  /**
   * Waits for the open until `giveUpAt` at most: then 'connection' naming the address that did not
   * answer (no coordinator has answered the open, so nothing was sent and nobody was waited behind);
   * rejects with `signal.reason` on abort.
   */
  async #openWithin(giveUpAt: number, request: Waited, signal: AbortSignal | undefined): Promise<void> {
    let timer: LongTimeout | undefined;
    const late = new Promise<never>((_, reject) => {
      const fail = () => {
        const message = `"${request.name}": no coordinator answered the session's open within acquire.wait of ${request.waitMs} ms + ${ANSWER_GRACE_MS} ms (waiting for ${this.#link.address}); nothing was sent`;
        reject(new TurnstileError("connection", message));
      };
      // A long timeout: a wait past 2^31-1 ms must not give up at once.
      timer = setLongTimeout(fail, giveUpAt - this.#clock.now());
    });
    try {
      // The signal races the whole wait, so its abort listener goes when this call ends, not when the
      // open settles (which may be long after: a reused signal would gather one listener per call).
      await raceSignal(Promise.race([this.open(), late]), signal);
    } finally {
      timer?.clear();
    }
  }

  /**
   * Sends a one-shot request (see SessionRequests.oneShot); rejects at once once the session has
   * ended, and with 'connection' while it reconnects (nothing was sent).
   */
  request(build: (requestId: string) => SessionRequest["kind"], options: { signal?: AbortSignal } = {}) {
    if (this.#ended !== undefined) return Promise.reject(this.#ended);
    return this.#requests.oneShot(build, options.signal);
  }

  /**
   * Ends the session: loses every held lock and rejects every pending request ('session-ended').
   * With a stream open it sends `close` (the server releases everything) and waits for the stream
   * to end; while reconnecting it just stops (the server releases the locks when their lease
   * runs out). On abort it cancels the stream and rejects with `signal.reason`.
   */
  async close(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (this.#ended !== undefined) return;
    this.#finish("ended", new TurnstileError("session-ended", "session closed by the client"), "session-ended", false);
    await this.#link.close(options.signal);
  }

  #onOpened(opened: Opened, openSentAtMs: number): void {
    if (this.#ended !== undefined) return;
    const outcome = this.#opening.opened(opened, openSentAtMs);
    if (outcome === "not-resumed") {
      const message = `session ${this.#opening.sessionId} could not be resumed: the coordinator opened a new session`;
      this.#finish("expired", new TurnstileError("session-ended", message), "expired");
      return;
    }
    const grantedMs = opened.ttl === undefined ? 0 : msFromDuration(opened.ttl);
    this.#keepAlive.adoptTtl(grantedMs > 0 ? grantedMs : this.#options.ttlMs);
    this.#state = "connected";
    if (outcome === "new") {
      this.#openWaiter?.resolve();
      this.#openWaiter = undefined;
      this.#emit("connected");
      return;
    }
    this.#resumer.apply(opened.held, openSentAtMs, this.#clock.now());
    this.#emit("resumed");
  }

  #onMessage(message: SessionResponse): void {
    if (this.#ended !== undefined) return;
    if (CLIENT_RECEIVED.hasSubscribers) CLIENT_RECEIVED.publish({ sessionId: this.sessionId, kind: message.kind });
    const kind = message.kind;
    switch (kind?.$case) {
      case "acquired":
      case "acquiredAll":
      case "released":
      case "proclaimed":
      case "transferred":
      case "releaseRequestSent":
      case "failed":
        this.#requests.settle(kind);
        break;
      case "releaseRequested": {
        const request = releaseRequestOf(kind.releaseRequested);
        // Told first: the locks' releaseRequested signals, then the client's event.
        if (this.#held.releaseRequested(request)) this.#options.onReleaseRequested?.(request);
        break;
      }
      case "lost":
        this.#held.loseReported(kind.lost);
        break;
      case "keepAliveAck":
        this.#keepAlive.acked(kind.keepAliveAck);
        break;
      case "queued":
        this.#requests.queued(kind.queued);
        break;
      default:
        // A stray `opened` and unknown kinds from a newer server need no action.
        break;
    }
  }

  #onStreamEnd(error: TurnstileError, final: FinalStatus | undefined, wasOpened: boolean): void {
    if (this.#ended !== undefined) return;
    this.#keepAlive.stop();
    this.#requests.streamBroke(error);
    this.#opening.streamEnded();
    const established = this.#opening.established;
    const decision = decideStreamEnd(final, {
      established,
      failedOpens: this.#opening.failedOpens,
      addressCount: this.#channels.addresses.length,
      wasOpened,
      nowMs: this.#clock.now(),
      renewedAtMs: Math.max(this.#opening.renewedAtMs, this.#clock.lastConfirmedSendMs),
      ttlMs: this.#clock.ttlMs,
    });
    if (decision.action === "fail") {
      this.#finish("ended", error, "session-ended");
    } else if (decision.action === "expire") {
      const expired = expiryError(decision.why, this.#opening.sessionId, this.#clock.ttlMs, error);
      this.#finish("expired", expired, decision.why === "refused" ? "session-ended" : "expired");
    } else {
      const broke = established && this.#state !== "reconnecting";
      if (broke) this.#state = "reconnecting";
      this.#link.connect(decision.when);
      if (broke) this.#emit("reconnecting", error);
    }
  }

  /** Writes `kind` on the opened stream; false when it was dropped (no opened stream, or unencodable). */
  #send(kind: SessionRequest["kind"]): boolean {
    if (this.#ended !== undefined) return false;
    const sent = this.#link.send(kind);
    if (CLIENT_SENT.hasSubscribers) CLIENT_SENT.publish({ sessionId: this.sessionId, kind });
    return sent;
  }

  // Called last in every handler: a throwing listener cannot leave the session half-updated.
  #emit(type: SessionEvent["type"], error?: TurnstileError): void {
    this.#options.onEvent?.({ type, sessionId: this.#opening.sessionId, address: this.#link.address, error });
  }

  #finish(state: SessionState, error: TurnstileError, lostReason: LostLockReason, stopLink = true): void {
    if (this.#ended !== undefined) return;
    this.#ended = error;
    this.#state = state;
    if (stopLink) this.#link.stop();
    this.#keepAlive.stop();
    this.#openWaiter?.reject(error);
    this.#openWaiter = undefined;
    // Told first: held locks are lost before anything else happens.
    this.#held.loseAll(error, lostReason);
    this.#held.dispose();
    this.#requests.end(error);
    if (stopLink && this.#opening.established) this.#emit(state === "expired" ? "expired" : "ended", error);
  }
}
