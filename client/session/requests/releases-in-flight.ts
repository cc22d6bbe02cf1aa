import { FailureReason, type SessionRequest } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { currentTraceParent } from "../../trace-context.js";
import type { InFlightRelease } from "../resume-reconciliation.js";
import type { RequestAnswer, RequestHandler, RequestRegistry } from "./request-answer.js";

/** The hold a release is for: (name, owner) and the token it was granted with. */
export interface ReleasedHold {
  name: string;
  owner: string;
  fencingToken: bigint;
}

/**
 * The session's releases sent (or due while disconnected) and not yet answered, by request id.
 * They outlive a broken stream: a resume claims their holds and settles them (docs/sessions.md).
 * A release answered UNAVAILABLE (the store did not take it) is sent again after a back-off, so
 * the hold is never left to be renewed by keepalives: calling `release()` twice is not needed.
 */
export class ReleasesInFlight {
  readonly #pending: RequestRegistry;
  readonly #send: (kind: SessionRequest["kind"]) => void;
  readonly #releases = new Map<string, InFlightRelease>();
  readonly #ended: () => Error | undefined;
  readonly #retries = new Map<NodeJS.Timeout, RequestHandler | undefined>();

  /**
   * `send` writes on the stream when there is one (and drops the request otherwise); `ended` says
   * whether the session is over (a release waiting to be sent again then ends with that error).
   */
  constructor(pending: RequestRegistry, send: (kind: SessionRequest["kind"]) => void, ended: () => Error | undefined) {
    this.#pending = pending;
    this.#send = send;
    this.#ended = ended;
  }

  /** Registers a release of `hold` and sends it; without `handler` nobody waits for the answer. */
  send(hold: ReleasedHold, handler?: RequestHandler, attempt = 0): void {
    const { name, owner, fencingToken } = hold;
    const request = new ReleaseRequest(this, hold, handler, attempt);
    const requestId = this.#pending.add(request);
    request.requestId = requestId;
    this.#releases.set(requestId, { requestId, name, owner, fencingToken });
    this.#send({ $case: "release", release: { requestId, name, owner, traceParent: currentTraceParent() } });
  }

  /** Ends the releases waiting to be sent again with `error` (the session ended). */
  dispose(error: Error): void {
    const waiting = [...this.#retries];
    this.#retries.clear();
    for (const [timer, handler] of waiting) {
      clearTimeout(timer);
      handler?.end(error);
    }
  }

  /** Internal (ReleaseRequest): the server answered `request`. */
  answered(request: ReleaseRequest, answer: RequestAnswer): void {
    this.#releases.delete(request.requestId);
    const { hold, handler, attempt } = request;
    if (answer.$case === "failed" && answer.failed.reason === FailureReason.FAILURE_REASON_UNAVAILABLE) {
      this.#again(hold, handler, attempt + 1);
      return;
    }
    handler?.answer(answer);
  }

  /** Internal (ReleaseRequest): the session ended before `request` was answered. */
  ended(request: ReleaseRequest, error: Error): void {
    this.#releases.delete(request.requestId);
    request.handler?.end(error);
  }

  #again(hold: ReleasedHold, handler: RequestHandler | undefined, attempt: number): void {
    const timer = setTimeout(
      () => {
        this.#retries.delete(timer);
        const ended = this.#ended();
        if (ended === undefined) this.send(hold, handler, attempt);
        else handler?.end(ended);
      },
      Math.min(1000, 50 * 2 ** attempt),
    );
    this.#retries.set(timer, handler);
  }

  /** The releases in flight, oldest first. */
  values(): InFlightRelease[] {
    return [...this.#releases.values()];
  }

  /** Answers release `requestId` as done without the server's word (a resume settled it). */
  settle(requestId: string): void {
    const name = this.#releases.get(requestId)?.name ?? "";
    this.#pending.settle({ $case: "released", released: { requestId, name, holdCount: 0 } });
  }
}

/** One release in flight as its registry handler: a class, so a release costs no closures. */
class ReleaseRequest implements RequestHandler {
  requestId = "";

  constructor(
    readonly releases: ReleasesInFlight,
    readonly hold: ReleasedHold,
    readonly handler: RequestHandler | undefined,
    readonly attempt: number,
  ) {}

  answer(answer: RequestAnswer): void {
    this.releases.answered(this, answer);
  }

  end(error: Error): void {
    this.releases.ended(this, error);
  }
}
