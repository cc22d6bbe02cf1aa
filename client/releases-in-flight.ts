import type { SessionRequest } from "../gen/ts/turnstile/v1/turnstile.js";
import type { PendingRequests, RequestHandler } from "./pending-requests.js";
import type { InFlightRelease } from "./resume-reconciliation.js";
import { currentTraceParent } from "./trace-context.js";

/** The hold a release is for: (name, owner) and the token it was granted with. */
export interface ReleasedHold {
  name: string;
  owner: string;
  fencingToken: bigint;
}

/**
 * The session's releases sent (or due while disconnected) and not yet answered, by request id.
 * They outlive a broken stream: a resume claims their holds and settles them (docs/sessions.md).
 */
export class ReleasesInFlight {
  readonly #pending: PendingRequests;
  readonly #send: (kind: SessionRequest["kind"]) => void;
  readonly #releases = new Map<string, InFlightRelease>();

  /** `send` writes on the stream when there is one (and drops the request otherwise). */
  constructor(pending: PendingRequests, send: (kind: SessionRequest["kind"]) => void) {
    this.#pending = pending;
    this.#send = send;
  }

  /** Registers a release of `hold` and sends it; without `handler` nobody waits for the answer. */
  send(hold: ReleasedHold, handler?: RequestHandler): void {
    const { name, owner, fencingToken } = hold;
    const requestId = this.#pending.add({
      answer: (answer) => {
        this.#releases.delete(requestId);
        handler?.answer(answer);
      },
      end: (error) => {
        this.#releases.delete(requestId);
        handler?.end(error);
      },
    });
    this.#releases.set(requestId, { requestId, name, owner, fencingToken });
    this.#send({ $case: "release", release: { requestId, name, owner, traceParent: currentTraceParent() } });
  }

  /** The releases in flight, oldest first. */
  values(): InFlightRelease[] {
    return [...this.#releases.values()];
  }

  /** Answers release `requestId` as done without the server's word (a resume settled it). */
  settle(requestId: string): void {
    const name = this.#releases.get(requestId)?.name ?? "";
    this.#pending.settle(requestId, { $case: "released", released: { requestId, name, holdCount: 0 } });
  }
}
