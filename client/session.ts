import type {
  KeepAliveAck,
  LockMode,
  LockServiceClient,
  Opened,
  SessionRequest,
  SessionResponse,
} from "../gen/ts/turnstile/v1/turnstile.js";
import { durationFromMs, msFromDuration } from "./duration.js";
import { HeldLocks, type Holding } from "./held-locks.js";
import { KeepAliveTimer } from "./keep-alive-timer.js";
import { LeaseClock, type MonotonicClock } from "./lease-clock.js";
import type { Lock, LockReleaser } from "./lock.js";
import { PendingRequests, type RequestAnswer } from "./pending-requests.js";
import { raceSignal } from "./race-signal.js";
import { SessionStream } from "./session-stream.js";
import { errorFromFailed, TurnstileError } from "./turnstile-error.js";

/** How a Session opens: requested TTL, client name, optional fixed safety margin and clock. */
export interface SessionOptions {
  ttlMs: number;
  clientName: string;
  safetyMarginMs?: number;
  now?: MonotonicClock;
}

/** One acquire as the session sends it; mode and limit are here so shared locks can reuse it. */
export interface SessionAcquire {
  name: string;
  owner: string;
  mode: LockMode;
  limit: number;
  /** Absent: wait forever; 0: try once. */
  waitMs?: number;
  value?: Uint8Array;
}

/** One acquire in flight: when it was sent, and whether its caller gave up on it. */
interface AcquireAttempt {
  owner: string;
  sentAtMs: number;
  abandoned: boolean;
  granted?: Lock;
}

/**
 * One session: one bidi stream that opens, sends a keepalive every ttl/3 and routes answers by
 * request id. When the stream ends, every held lock is lost ('session-ended') and every request
 * in flight rejects; the session object does not reconnect.
 */
export class Session implements LockReleaser {
  readonly #rpc: LockServiceClient;
  readonly #options: SessionOptions;
  readonly #clock: LeaseClock<Holding>;
  readonly #held: HeldLocks;
  readonly #pending = new PendingRequests();
  #stream: SessionStream | undefined;
  #opened: Promise<void> | undefined;
  #openWaiter: { resolve: () => void; reject: (error: Error) => void } | undefined;
  #ended: TurnstileError | undefined;
  readonly #keepAlive: KeepAliveTimer;
  #resume = { sessionId: "", secret: "" };

  constructor(rpc: LockServiceClient, options: SessionOptions) {
    this.#rpc = rpc;
    this.#options = options;
    const { ttlMs, safetyMarginMs, now } = options;
    this.#clock = new LeaseClock({ ttlMs, safetyMarginMs, now });
    this.#held = new HeldLocks(this.#clock, this, (lock) => this.#releaseQuietly(lock));
    this.#keepAlive = new KeepAliveTimer(this.#clock, (seq) => {
      this.#send({ $case: "keepAlive", keepAlive: { seq } });
    });
  }

  /** The server's id for this session; empty until opened. */
  get sessionId(): string {
    return this.#resume.sessionId;
  }

  /** True once the session is over (stream ended or closed); it then accepts no more requests. */
  get ended(): boolean {
    return this.#ended !== undefined;
  }

  /**
   * Starts the stream on first call and resolves once the server answered `opened`. Rejects with
   * a TurnstileError when the stream ends first, or with `signal.reason` (opening goes on).
   */
  open(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (this.#ended !== undefined) return Promise.reject(this.#ended);
    if (this.#opened === undefined) {
      this.#opened = new Promise<void>((resolve, reject) => {
        this.#openWaiter = { resolve, reject };
      });
      this.#opened.catch(() => {});
      this.#start();
    }
    return raceSignal(this.#opened, options.signal);
  }

  /**
   * Sends an acquire and resolves with the granted Lock. Rejects with a TurnstileError for a
   * `failed` answer or the end of the session, with a LostLockError when the lease had already
   * run out at grant time, and with `signal.reason` on abort (cancelling, or releasing a late grant).
   */
  async acquire(request: SessionAcquire, options: { signal?: AbortSignal } = {}): Promise<Lock> {
    const { signal } = options;
    await this.open({ signal });
    signal?.throwIfAborted();
    if (this.#ended !== undefined) throw this.#ended;
    const attempt: AcquireAttempt = { owner: request.owner, sentAtMs: 0, abandoned: false };
    let requestId = "";
    const answer = new Promise<Lock>((resolve, reject) => {
      requestId = this.#pending.add({
        answer: (reply) => this.#onAcquireAnswer(attempt, reply, resolve, reject),
        end: reject,
      });
    });
    const { name, owner, mode, limit, waitMs, value = new Uint8Array() } = request;
    const wait = waitMs === undefined ? undefined : durationFromMs(waitMs);
    const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    attempt.sentAtMs = this.#clock.now();
    this.#send({
      $case: "acquire",
      acquire: { requestId, name, mode, limit, wait, owner, value: bytes },
    });
    try {
      return await raceSignal(answer, signal);
    } catch (error) {
      if (signal?.aborted && error === signal.reason) {
        attempt.abandoned = true;
        if (attempt.granted !== undefined) attempt.granted.release().catch(() => {});
        else this.#send({ $case: "cancel", cancel: { requestId } });
      }
      throw error;
    }
  }

  // Runs in the message handler, so the holding exists before a `lost` right behind the grant.
  #onAcquireAnswer(
    attempt: AcquireAttempt,
    reply: RequestAnswer,
    resolve: (lock: Lock) => void,
    reject: (error: Error) => void,
  ): void {
    if (reply.$case === "failed") {
      reject(errorFromFailed(reply.failed));
    } else if (reply.$case !== "acquired") {
      reject(new TurnstileError("internal", `acquire answered with ${reply.$case}`));
    } else if (attempt.abandoned) {
      this.#releaseQuietly({ name: reply.acquired.name, owner: attempt.owner });
    } else {
      const lock = this.#held.grant(reply.acquired, attempt.owner, attempt.sentAtMs);
      attempt.granted = lock;
      if (lock.lost) reject(lock.signal.reason);
      else resolve(lock);
    }
  }

  /** Sends the release of one hold and waits for the answer (see LockReleaser). */
  async releaseLock(lock: Lock): Promise<void> {
    const holding = this.#held.beginRelease(lock);
    if (holding === undefined) return;
    try {
      if (this.#ended !== undefined) return;
      const answer = await new Promise<RequestAnswer>((resolve, reject) => {
        const requestId = this.#pending.add({ answer: resolve, end: reject });
        const { name, owner } = lock;
        this.#send({ $case: "release", release: { requestId, name, owner } });
      });
      // A `lost` that crossed the release on the wire already took the hold: nothing to report.
      if (answer.$case === "failed" && !holding.gone) throw errorFromFailed(answer.failed);
    } catch (error) {
      if (this.#ended === undefined) throw error;
    } finally {
      this.#held.endRelease(holding);
    }
  }

  /** Sends one request under a fresh id; resolves with its answer (`failed` too), rejects if the session ends. */
  request(build: (requestId: string) => SessionRequest["kind"], options: { signal?: AbortSignal } = {}) {
    if (this.#ended !== undefined) return Promise.reject(this.#ended);
    const answer = this.#pending.call((requestId) => this.#send(build(requestId)));
    return raceSignal(answer, options.signal);
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
   * Ends the session: loses every held lock and rejects every pending request ('session-ended'),
   * sends `close` so the server releases everything, and waits for the stream to end. On abort
   * it cancels the stream and rejects with `signal.reason`.
   */
  async close(options: { signal?: AbortSignal } = {}): Promise<void> {
    const stream = this.#stream;
    this.#end(new TurnstileError("session-ended", "session closed by the client"));
    if (stream === undefined) return;
    // No half-close here: the server ends the stream once it has released everything.
    stream.send({ $case: "close", close: {} });
    try {
      await raceSignal(stream.done, options.signal);
    } catch (error) {
      stream.cancel();
      throw error;
    }
  }

  #start(): void {
    this.#stream = new SessionStream(this.#rpc, {
      message: (message) => this.#onMessage(message),
      ended: (error) => this.#end(error),
    });
    const { clientName, ttlMs } = this.#options;
    this.#stream.send({
      $case: "open",
      open: { clientName, ttl: durationFromMs(ttlMs), resumeSessionId: "", resumeSecret: "", held: [] },
    });
  }

  #onMessage(message: SessionResponse): void {
    if (this.#ended !== undefined) return;
    const kind = message.kind;
    switch (kind?.$case) {
      case "opened":
        this.#onOpened(kind.opened);
        break;
      case "acquired":
      case "released":
      case "proclaimed":
      case "failed":
        this.#pending.settleAnswer(kind);
        break;
      case "lost":
        this.#held.loseReported(kind.lost);
        break;
      case "keepAliveAck":
        this.#onKeepAliveAck(kind.keepAliveAck);
        break;
      default:
        // `queued` (position only) and unknown kinds from a newer server need no action.
        break;
    }
  }

  #onOpened(opened: Opened): void {
    const waiter = this.#openWaiter;
    if (waiter === undefined) return;
    this.#openWaiter = undefined;
    this.#resume = { sessionId: opened.sessionId, secret: opened.resumeSecret };
    const grantedMs = opened.ttl === undefined ? 0 : msFromDuration(opened.ttl);
    this.#adoptTtl(grantedMs > 0 ? grantedMs : this.#options.ttlMs);
    waiter.resolve();
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
  #releaseQuietly(hold: { name: string; owner: string }): void {
    if (this.#ended !== undefined) return;
    const requestId = this.#pending.add({ answer: () => {}, end: () => {} });
    const { name, owner } = hold;
    this.#send({ $case: "release", release: { requestId, name, owner } });
  }

  #send(kind: SessionRequest["kind"]): void {
    if (this.#ended === undefined) this.#stream?.send(kind);
  }

  #end(error: TurnstileError): void {
    if (this.#ended !== undefined) return;
    this.#ended = error;
    this.#keepAlive.stop();
    this.#openWaiter?.reject(error);
    this.#openWaiter = undefined;
    // Told first: held locks are lost before anything else happens.
    this.#held.loseAll(error);
    this.#held.dispose();
    this.#pending.endAll(error);
  }
}
