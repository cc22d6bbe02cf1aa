import type { SessionRequest } from "../../../gen/ts/turnstile/v1/turnstile.js";
import type { HeldLocks } from "../../locks/held-locks.js";
import type { MonotonicClock } from "../../locks/lease-clock.js";
import type { Lock } from "../../locks/lock.js";
import { raceSignal } from "../../race-signal.js";
import { errorFromFailed, TurnstileError } from "../../turnstile-error.js";
import { AcquireDeadlines } from "./acquire-deadlines.js";
import { AcquiresInFlight, type PendingAcquire, type SessionAcquire } from "./acquires-in-flight.js";
import { type ReleasedHold, ReleasesInFlight } from "./releases-in-flight.js";
import type { RequestAnswer, RequestHandler, RequestRegistry } from "./request-answer.js";
import { type PendingSetAcquire, type SessionSetAcquire, SetAcquiresInFlight } from "./set-acquires-in-flight.js";

/** What a session's requests work with. */
export interface SessionRequestsContext {
  held: HeldLocks;
  now: MonotonicClock;
  /**
   * Writes on the session's stream; false when dropped: while there is none (a resume re-sends what
   * matters), or when it cannot be encoded (then `refuse` was told first).
   */
  send(kind: SessionRequest["kind"]): boolean;
  /** The error the session ended with, or undefined while it lives. */
  ended(): TurnstileError | undefined;
}

/**
 * Every request of one session in flight, in one place: it allocates request ids, sends acquires,
 * releases and one-shot requests, routes each server answer to its request, fails one-shots when
 * a stream breaks (or when there is none to send them on), fails a request that cannot be encoded
 * and ends everything when the session ends. Acquires and releases outlive a broken stream (a resume
 * re-sends them, see SessionResumer); one-shots (Proclaim, Transfer, RequestRelease) do not.
 */
export class SessionRequests implements RequestRegistry {
  readonly #ctx: SessionRequestsContext;
  readonly #handlers = new Map<string, RequestHandler>();
  #lastId = 0;
  readonly #oneShots = new Set<string>();
  readonly #acquires: AcquiresInFlight;
  readonly #deadlines: AcquireDeadlines;
  readonly #sets: SetAcquiresInFlight;
  readonly #setDeadlines: AcquireDeadlines<PendingSetAcquire>;
  /** The releases in flight (a resume claims their holds and settles them). */
  readonly releases: ReleasesInFlight;

  constructor(ctx: SessionRequestsContext) {
    this.#ctx = ctx;
    this.releases = new ReleasesInFlight(this, ctx.send, ctx.ended);
    this.#acquires = new AcquiresInFlight(this, ctx.held, ctx.now, (hold) => this.releaseQuietly(hold));
    const cancel = ({ requestId }: { requestId: string }) => ctx.send({ $case: "cancel", cancel: { requestId } });
    this.#deadlines = new AcquireDeadlines(this.#acquires.byId, ctx.now, cancel);
    this.#sets = new SetAcquiresInFlight(this, ctx.held, ctx.now, (hold) => this.releaseQuietly(hold));
    this.#setDeadlines = new AcquireDeadlines(this.#sets.byId, ctx.now, cancel);
  }

  /** The AcquireAll requests in flight, by request id (a resume re-sends them). */
  get sets(): ReadonlyMap<string, PendingSetAcquire> {
    return this.#sets.byId;
  }

  /**
   * Sends an AcquireAll and resolves with one Lock per name, in request order, all granted together;
   * abort and `giveUpAtMs` as for `acquire` (a grant that crosses them is released, every lock of it).
   */
  async acquireAll(request: SessionSetAcquire, giveUpAtMs: number, signal: AbortSignal | undefined): Promise<Lock[]> {
    const { requestId, message, answer, abandon } = this.#sets.add(request, giveUpAtMs);
    if (giveUpAtMs !== Number.POSITIVE_INFINITY) this.#setDeadlines.watch();
    this.#ctx.send(message);
    try {
      return await raceSignal(answer, signal);
    } catch (error) {
      if (signal?.aborted && error === signal.reason && abandon())
        this.#ctx.send({ $case: "cancel", cancel: { requestId } });
      throw error;
    }
  }

  /** The acquires in flight, by request id (a resume re-sends them). */
  get acquires(): ReadonlyMap<string, PendingAcquire> {
    return this.#acquires.byId;
  }

  /**
   * Sends an acquire and resolves with the granted Lock (see Session.acquire); on abort it rejects
   * with `signal.reason` and sends a `cancel` while the request is still in flight. Unanswered at
   * `giveUpAtMs` it rejects with 'timeout' and is withdrawn (AcquireDeadlines).
   */
  async acquire(request: SessionAcquire, giveUpAtMs: number, signal: AbortSignal | undefined): Promise<Lock> {
    const ticket = this.#acquires.add(request, giveUpAtMs);
    if (giveUpAtMs !== Number.POSITIVE_INFINITY) this.#deadlines.watch();
    this.#ctx.send(ticket.message);
    try {
      return await raceSignal(ticket.answer, signal);
    } catch (error) {
      if (signal?.aborted && error === signal.reason && ticket.abandon())
        this.#ctx.send({ $case: "cancel", cancel: { requestId: ticket.requestId } });
      throw error;
    }
  }

  /** Sends the release of one hold and waits for the answer, across reconnects (see LockReleaser). */
  async release(lock: Lock): Promise<void> {
    const { held, ended } = this.#ctx;
    const holding = held.beginRelease(lock);
    if (holding === undefined) return;
    try {
      if (ended() !== undefined) return;
      const answer = await new Promise<RequestAnswer>((resolve, reject) => {
        this.releases.send(holding, { answer: resolve, end: reject });
      });
      // A `lost` that crossed the release on the wire already took the hold: nothing to report.
      if (answer.$case === "failed" && !holding.gone) throw errorFromFailed(answer.failed);
    } catch (error) {
      if (ended() === undefined) throw error;
    } finally {
      held.endRelease(holding);
    }
  }

  /**
   * Sends a Transfer of `lock`'s hold (every handle of its holder) to `to` ("" session: the head of the
   * queue) and waits for the answer; once Transferred arrives every handle of the holder ends (released).
   * Rejects with a TurnstileError when the server refuses ('not-found' naming who waits, 'not-held',
   * 'conflict') and with `signal.reason` on abort (the transfer may still happen).
   */
  async transfer(lock: Lock, to: { sessionId: string; owner: string }, signal: AbortSignal | undefined) {
    const { name, owner } = lock;
    const answer = await this.oneShot(
      (requestId) => ({
        $case: "transfer",
        transfer: { requestId, name, owner, toSessionId: to.sessionId, toOwner: to.owner },
      }),
      signal,
    );
    if (answer.$case === "failed") throw errorFromFailed(answer.failed);
    if (answer.$case !== "transferred") throw new TurnstileError("internal", `transfer answered ${answer.$case}`);
    this.#ctx.held.handedOver(lock);
    return answer.transferred;
  }

  /** Best-effort release of a hold nobody waits for (lease unconfirmed, or granted too late). */
  releaseQuietly(hold: ReleasedHold): void {
    if (this.#ctx.ended() === undefined) this.releases.send(hold);
  }

  /**
   * Sends a request answered once and not re-sent across a reconnect (Proclaim, Transfer,
   * RequestRelease) under a fresh id, built by `build`, and resolves with its answer. While the
   * session reconnects it rejects at once with 'connection' (nothing was sent: safe to retry), as
   * it does when the stream breaks before the answer. Aborting `signal` stops the waiting, not the request.
   */
  oneShot(build: (requestId: string) => SessionRequest["kind"], signal: AbortSignal | undefined) {
    const answer = new Promise<RequestAnswer>((resolve, reject) => {
      const id = this.add({
        answer: (a) => {
          this.#oneShots.delete(id);
          resolve(a);
        },
        end: (e) => {
          this.#oneShots.delete(id);
          reject(e);
        },
      });
      this.#oneShots.add(id);
      // Dropped, it would never be answered: no resume re-sends a one-shot.
      if (!this.#ctx.send(build(id))) {
        const error = new TurnstileError("connection", "the session is reconnecting: nothing was sent");
        this.#take(id)?.end(error);
      }
    });
    return raceSignal(answer, signal);
  }

  /** Registers `handler` under a fresh request id and returns the id (see RequestRegistry). */
  add(handler: RequestHandler): string {
    this.#lastId += 1;
    const requestId = String(this.#lastId);
    this.#handlers.set(requestId, handler);
    return requestId;
  }

  /** A `queued` answer: tells the acquire's caller its position (an answer for nobody is dropped). */
  queued(queued: { requestId: string; position: number }): void {
    const attempt = this.#acquires.byId.get(queued.requestId) ?? this.#sets.byId.get(queued.requestId);
    if (attempt !== undefined && !attempt.abandoned) attempt.request.onQueued?.(queued.position);
  }

  /** Hands a server answer to the request it names; false (answer dropped) when none is in flight. */
  settle(answer: RequestAnswer): boolean {
    const handler = this.#take(requestIdOf(answer));
    handler?.answer(answer);
    return handler !== undefined;
  }

  /**
   * The stream broke: one-shots fail with 'connection' (their answer may have been lost), so no
   * caller waits forever; acquires and releases wait for the resume.
   */
  streamBroke(cause: Error): void {
    const error = new TurnstileError("connection", "the session's stream broke before the answer arrived", { cause });
    for (const id of [...this.#oneShots]) this.#take(id)?.end(error);
  }

  /**
   * `kind` could not be encoded (see SessionStream): the request it carries fails with `error`
   * ('invalid-argument') and is forgotten, so no resume sends it again.
   */
  refuse(kind: SessionRequest["kind"], error: TurnstileError): void {
    const requestId = requestIdOfRequest(kind);
    if (requestId !== undefined) this.#take(requestId)?.end(error);
  }

  /** The session ended: every request in flight, and every release waiting to be re-sent, ends with `error`. */
  end(error: Error): void {
    this.#deadlines.stop();
    this.#setDeadlines.stop();
    const handlers = [...this.#handlers.values()];
    this.#handlers.clear();
    for (const handler of handlers) handler.end(error);
    this.releases.dispose(error);
  }

  #take(requestId: string): RequestHandler | undefined {
    const handler = this.#handlers.get(requestId);
    this.#handlers.delete(requestId);
    return handler;
  }
}

/** The id of the request `kind` carries; undefined for messages that are no request of their own (cancel, keepalive). */
function requestIdOfRequest(kind: SessionRequest["kind"]): string | undefined {
  switch (kind?.$case) {
    case "acquire":
      return kind.acquire.requestId;
    case "acquireAll":
      return kind.acquireAll.requestId;
    case "release":
      return kind.release.requestId;
    case "proclaim":
      return kind.proclaim.requestId;
    case "transfer":
      return kind.transfer.requestId;
    case "requestRelease":
      return kind.requestRelease.requestId;
    default:
      return undefined;
  }
}

/** The request id an answer is for. */
function requestIdOf(answer: RequestAnswer): string {
  switch (answer.$case) {
    case "acquired":
      return answer.acquired.requestId;
    case "acquiredAll":
      return answer.acquiredAll.requestId;
    case "released":
      return answer.released.requestId;
    case "proclaimed":
      return answer.proclaimed.requestId;
    case "transferred":
      return answer.transferred.requestId;
    case "releaseRequestSent":
      return answer.releaseRequestSent.requestId;
    case "failed":
      return answer.failed.requestId;
  }
}
