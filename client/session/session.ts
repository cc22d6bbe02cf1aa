import type {
  KeepAliveAck,
  Open,
  Opened,
  SessionRequest,
  SessionResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { durationFromMs, msFromDuration } from "../../wire/duration.js";
import type { ChannelPool } from "../connection/channel-pool.js";
import { HeldLocks, type Holding } from "../locks/held-locks.js";
import { LeaseClock } from "../locks/lease-clock.js";
import type { Lock, LockReleaser } from "../locks/lock.js";
import type { LostLockReason } from "../lost-lock-error.js";
import { raceSignal } from "../race-signal.js";
import { errorFromFailed, TurnstileError } from "../turnstile-error.js";
import { KeepAliveTimer } from "./keep-alive-timer.js";
import { AcquiresInFlight } from "./requests/acquires-in-flight.js";
import { OneShotRequests } from "./requests/one-shot-requests.js";
import { acquireMessage, type SessionAcquire } from "./requests/pending-acquire.js";
import { PendingRequests, type RequestAnswer, requestIdOf } from "./requests/pending-requests.js";
import { type ReleasedHold, ReleasesInFlight } from "./requests/releases-in-flight.js";
import type { SessionEvent, SessionState } from "./session-event.js";
import { SessionLink } from "./session-link.js";
import type { SessionOptions } from "./session-options.js";
import { SessionResumer } from "./session-resume.js";
import { decideStreamEnd, expiryError, type FinalStatus } from "./stream-end.js";

export type { SessionAcquire } from "./requests/pending-acquire.js";
export type { SessionEvent, SessionState } from "./session-event.js";
export type { SessionOptions } from "./session-options.js";

/**
 * One session: it survives broken streams. It opens a stream, sends a keepalive every ttl/3 and
 * routes answers by request id; when a stream breaks it reconnects over the coordinator addresses
 * and resumes (docs/sessions.md), keeping held locks (valid by the local lease meanwhile), pending
 * acquires and releases in flight. It ends on close, when the session expired, or on a fatal status.
 */
export class Session implements LockReleaser {
  readonly #channels: ChannelPool;
  readonly #options: SessionOptions;
  readonly #clock: LeaseClock<Holding>;
  readonly #held: HeldLocks;
  readonly #pending = new PendingRequests();
  readonly #oneShots = new OneShotRequests(this.#pending);
  readonly #acquires: AcquiresInFlight;
  readonly #releases: ReleasesInFlight;
  readonly #keepAlive: KeepAliveTimer;
  readonly #link: SessionLink;
  readonly #resumer: SessionResumer;
  #state: SessionState = "connecting";
  #opened: Promise<void> | undefined;
  #openWaiter: { resolve: () => void; reject: (error: Error) => void } | undefined;
  #ended: TurnstileError | undefined;
  #resume = { sessionId: "", secret: "" };
  #failedOpens = 0;
  /** Send time of the newest request that renewed the session record (an answered open). */
  #renewedAtMs = Number.NEGATIVE_INFINITY;

  constructor(channels: ChannelPool, options: SessionOptions) {
    this.#channels = channels;
    this.#options = options;
    const { ttlMs, safetyMarginMs, now } = options;
    this.#clock = new LeaseClock({ ttlMs, safetyMarginMs, now });
    const send = (kind: SessionRequest["kind"]) => this.#send(kind);
    this.#releases = new ReleasesInFlight(this.#pending, send, () => this.#ended);
    const releaseQuietly = (hold: ReleasedHold) => this.#releaseQuietly(hold);
    this.#held = new HeldLocks(this.#clock, this, releaseQuietly);
    this.#acquires = new AcquiresInFlight(this.#pending, this.#held, this.#clock.now, releaseQuietly);
    this.#keepAlive = new KeepAliveTimer(this.#clock, (seq) => this.#send({ $case: "keepAlive", keepAlive: { seq } }));
    const resumeContext = { held: this.#held, acquires: this.#acquires.byId, releases: this.#releases };
    this.#resumer = new SessionResumer({ ...resumeContext, send });
    const linkOptions = { backoff: options.backoff, random: options.random, now: this.#clock.now };
    this.#link = new SessionLink(channels, linkOptions, {
      open: () => this.#openMessage(),
      opened: (opened, attempt) => this.#onOpened(opened, attempt.openSentAtMs),
      message: (message) => this.#onMessage(message),
      ended: (error, final, wasOpened) => this.#onStreamEnd(error, final, wasOpened),
    });
  }

  /** The server's id for this session; empty until opened. */
  get sessionId(): string {
    return this.#resume.sessionId;
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
   * abort (cancelling, or releasing a late grant).
   */
  async acquire(request: SessionAcquire, options: { signal?: AbortSignal } = {}): Promise<Lock> {
    const { signal } = options;
    await this.open({ signal });
    signal?.throwIfAborted();
    if (this.#ended !== undefined) throw this.#ended;
    const { requestId, answer, abandon } = this.#acquires.add(request);
    this.#send(acquireMessage(requestId, request, request.waitMs));
    try {
      return await raceSignal(answer, signal);
    } catch (error) {
      if (signal?.aborted && error === signal.reason && abandon())
        this.#send({ $case: "cancel", cancel: { requestId } });
      throw error;
    }
  }

  /** Sends the release of one hold and waits for the answer, across reconnects (see LockReleaser). */
  async releaseLock(lock: Lock): Promise<void> {
    const holding = this.#held.beginRelease(lock);
    if (holding === undefined) return;
    try {
      if (this.#ended !== undefined) return;
      const answer = await new Promise<RequestAnswer>((resolve, reject) => {
        this.#releases.send(holding, { answer: resolve, end: reject });
      });
      // A `lost` that crossed the release on the wire already took the hold: nothing to report.
      if (answer.$case === "failed" && !holding.gone) throw errorFromFailed(answer.failed);
    } catch (error) {
      if (this.#ended === undefined) throw error;
    } finally {
      this.#held.endRelease(holding);
    }
  }

  /** Sends a one-shot request (see OneShotRequests); rejects at once once the session has ended. */
  request(build: (requestId: string) => SessionRequest["kind"], options: { signal?: AbortSignal } = {}) {
    if (this.#ended !== undefined) return Promise.reject(this.#ended);
    return this.#oneShots.send(build, (kind) => this.#send(kind), options.signal);
  }

  /** Loses every lock whose lease deadline has passed (see LockReleaser). */
  checkLeases(): void {
    this.#held.sweep();
  }

  /** Milliseconds left of a live lock's local lease (see LockReleaser). */
  leaseRemainingMs(lock: Lock): number | undefined {
    return this.#held.remainingMs(lock);
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

  #openMessage(): Open {
    const { clientName, ttlMs } = this.#options;
    const { sessionId, secret } = this.#resume;
    const held = sessionId === "" ? [] : this.#resumer.claim();
    return { clientName, ttl: durationFromMs(ttlMs), resumeSessionId: sessionId, resumeSecret: secret, held };
  }

  #onOpened(opened: Opened, openSentAtMs: number): void {
    if (this.#ended !== undefined) return;
    const resuming = this.#resume.sessionId !== "";
    if (resuming && (!opened.resumed || opened.sessionId !== this.#resume.sessionId)) {
      const message = `session ${this.#resume.sessionId} could not be resumed: the coordinator opened a new session`;
      this.#finish("expired", new TurnstileError("session-ended", message), "expired");
      return;
    }
    this.#resume = { sessionId: opened.sessionId, secret: opened.resumeSecret || this.#resume.secret };
    this.#renewedAtMs = openSentAtMs;
    const grantedMs = opened.ttl === undefined ? 0 : msFromDuration(opened.ttl);
    this.#adoptTtl(grantedMs > 0 ? grantedMs : this.#options.ttlMs);
    this.#state = "connected";
    if (!resuming) {
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
    const kind = message.kind;
    switch (kind?.$case) {
      case "acquired":
      case "released":
      case "proclaimed":
      case "failed":
        this.#pending.settle(requestIdOf(kind), kind);
        break;
      case "lost":
        this.#held.loseReported(kind.lost);
        break;
      case "keepAliveAck":
        this.#onKeepAliveAck(kind.keepAliveAck);
        break;
      default:
        // `queued` (position only), a stray `opened` and unknown kinds from a newer server need no action.
        break;
    }
  }

  #onStreamEnd(error: TurnstileError, final: FinalStatus | undefined, wasOpened: boolean): void {
    if (this.#ended !== undefined) return;
    this.#keepAlive.stop();
    this.#oneShots.failAll(error);
    const established = this.#resume.sessionId !== "";
    if (!established) this.#failedOpens += 1;
    const decision = decideStreamEnd(final, {
      established,
      failedOpens: this.#failedOpens,
      addressCount: this.#channels.addresses.length,
      wasOpened,
      nowMs: this.#clock.now(),
      renewedAtMs: Math.max(this.#renewedAtMs, this.#clock.lastConfirmedSendMs),
      ttlMs: this.#clock.ttlMs,
    });
    if (decision.action === "fail") {
      this.#finish("ended", error, "session-ended");
    } else if (decision.action === "expire") {
      const expired = expiryError(decision.why, this.#resume.sessionId, this.#clock.ttlMs, error);
      this.#finish("expired", expired, decision.why === "refused" ? "session-ended" : "expired");
    } else {
      const broke = established && this.#state !== "reconnecting";
      if (broke) this.#state = "reconnecting";
      this.#link.connect(decision.when);
      if (broke) this.#emit("reconnecting", error);
    }
  }

  #onKeepAliveAck(ack: KeepAliveAck): void {
    this.#clock.keepAliveAcked(ack.seq);
    const ttlMs = ack.ttl === undefined ? 0 : msFromDuration(ack.ttl);
    if (ttlMs > 0 && ttlMs !== this.#clock.ttlMs) this.#adoptTtl(ttlMs);
    this.#held.rearm();
  }

  #adoptTtl(ttlMs: number): void {
    this.#clock.setTtl(ttlMs);
    this.#keepAlive.start(ttlMs);
    this.#held.rearm();
  }

  /** Best-effort release of a hold nobody waits for (lease unconfirmed, or granted too late). */
  #releaseQuietly(hold: ReleasedHold): void {
    if (this.#ended === undefined) this.#releases.send(hold);
  }

  #send(kind: SessionRequest["kind"]): void {
    if (this.#ended === undefined) this.#link.send(kind);
  }

  // Called last in every handler: a throwing listener cannot leave the session half-updated.
  #emit(type: SessionEvent["type"], error?: TurnstileError): void {
    this.#options.onEvent?.({ type, sessionId: this.#resume.sessionId, address: this.#link.address, error });
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
    this.#pending.endAll(error);
    this.#releases.dispose(error);
    if (stopLink && this.#resume.sessionId !== "") this.#emit(state === "expired" ? "expired" : "ended", error);
  }
}
