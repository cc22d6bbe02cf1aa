import type { SessionRequest } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { raceSignal } from "../../race-signal.js";
import { TurnstileError } from "../../turnstile-error.js";
import type { PendingRequests, RequestAnswer } from "./pending-requests.js";

/**
 * Requests that are answered once and not re-sent across a reconnect (Proclaim). A broken stream
 * fails them with 'connection' — their answer may have been lost — so no caller waits forever;
 * aborting `signal` stops the waiting, not the request.
 */
export class OneShotRequests {
  readonly #ids = new Set<string>();

  constructor(private readonly pending: PendingRequests) {}

  /** Registers a request under a fresh id, sends what `build` makes of it, and resolves with its answer. */
  send(
    build: (requestId: string) => SessionRequest["kind"],
    write: (kind: SessionRequest["kind"]) => void,
    signal?: AbortSignal,
  ): Promise<RequestAnswer> {
    const answer = new Promise<RequestAnswer>((resolve, reject) => {
      const id = this.pending.add({
        answer: (a) => {
          this.#ids.delete(id);
          resolve(a);
        },
        end: (e) => {
          this.#ids.delete(id);
          reject(e);
        },
      });
      this.#ids.add(id);
      write(build(id));
    });
    return raceSignal(answer, signal);
  }

  /** Fails every request in flight: the stream they were sent on broke. */
  failAll(cause: Error): void {
    const error = new TurnstileError("connection", "the session's stream broke before the answer arrived", { cause });
    for (const id of [...this.#ids]) this.pending.fail(id, error);
  }
}
