import type { SessionRequest } from "../../../gen/ts/turnstile/v1/turnstile.js";
import type { Lock } from "../../locks/lock.js";
import type { RequestAnswer, RequestHandler } from "./request-answer.js";

/** What an AcquireAttempt of request type `R` reports to: the session's AcquiresInFlight. */
export interface AttemptOwner<R> {
  /** The server answered `attempt`. */
  answered(attempt: AcquireAttempt<R>, reply: RequestAnswer): void;
  /** The session ended before `attempt` was answered. */
  ended(attempt: AcquireAttempt<R>, error: Error): void;
  /** The caller gives up on `attempt`; true while it is still in flight (see AcquireTicket.abandon). */
  abandon(attempt: AcquireAttempt<R>): boolean;
}

function ignore(): void {}

/**
 * One acquire in flight: the request, its registry handler and the caller's promise in one object,
 * so that an acquire costs one allocation and no closure beyond its promise's executor (this is
 * the client's per-message path).
 */
export class AcquireAttempt<R> implements RequestHandler {
  requestId = "";
  firstSentAtMs = 0;
  abandoned = false;
  /** The Lock the grant made (released if the caller abandons after it arrived). */
  lock: Lock | undefined;
  /** The caller's promise: the Lock, or why there is none. */
  readonly granted: Promise<Lock>;
  /** Resolves `granted`. */
  grant: (lock: Lock) => void = ignore;
  /** Rejects `granted`; the request itself stays in flight until answered. */
  fail: (error: Error) => void = ignore;
  readonly #owner: AttemptOwner<R>;

  /** A new attempt; its owner registers it and sets `requestId` and `firstSentAtMs`. */
  constructor(
    owner: AttemptOwner<R>,
    readonly request: R,
    readonly giveUpAtMs: number,
    readonly traceParent: string,
  ) {
    this.#owner = owner;
    this.granted = new Promise<Lock>((resolve, reject) => {
      this.grant = resolve;
      this.fail = reject;
    });
  }

  /** The server's answer (RequestHandler). */
  answer(reply: RequestAnswer): void {
    this.#owner.answered(this, reply);
  }

  /** The session ended first (RequestHandler). */
  end(error: Error): void {
    this.#owner.ended(this, error);
  }
}

/** The AcquireTicket of one AcquireAttempt (a class: its `abandon` needs no closure). */
export class AttemptTicket<R> {
  readonly requestId: string;
  readonly answer: Promise<Lock>;
  readonly #attempt: AcquireAttempt<R>;
  readonly #owner: AttemptOwner<R>;

  /** `message` is the attempt's first `acquire`; `owner` is the attempt's. */
  constructor(
    attempt: AcquireAttempt<R>,
    owner: AttemptOwner<R>,
    readonly message: NonNullable<SessionRequest["kind"]>,
  ) {
    this.requestId = attempt.requestId;
    this.answer = attempt.granted;
    this.#attempt = attempt;
    this.#owner = owner;
  }

  /** See AcquireTicket.abandon. */
  abandon(): boolean {
    return this.#owner.abandon(this.#attempt);
  }
}
