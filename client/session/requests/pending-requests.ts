import type { Acquired, Failed, Proclaimed, Released } from "../../../gen/ts/turnstile/v1/turnstile.js";

/** The final answer to a request: `acquired`, `released` or `proclaimed`, or `failed`. */
export type RequestAnswer =
  | { $case: "acquired"; acquired: Acquired }
  | { $case: "released"; released: Released }
  | { $case: "proclaimed"; proclaimed: Proclaimed }
  | { $case: "failed"; failed: Failed };

/** The request id an answer is for. */
export function requestIdOf(answer: RequestAnswer): string {
  switch (answer.$case) {
    case "acquired":
      return answer.acquired.requestId;
    case "released":
      return answer.released.requestId;
    case "proclaimed":
      return answer.proclaimed.requestId;
    case "failed":
      return answer.failed.requestId;
  }
}

/** Receives exactly one call: `answer` when the server answers, or `end` when the session ends. */
export interface RequestHandler {
  answer(answer: RequestAnswer): void;
  end(error: Error): void;
}

/**
 * The session's requests in flight, by client-generated request id. Ids are unique for the life
 * of the session object (not per stream), so a resumed session never reuses one.
 */
export class PendingRequests {
  #lastId = 0;
  readonly #handlers = new Map<string, RequestHandler>();

  /** Registers `handler` under a fresh request id and returns the id. */
  add(handler: RequestHandler): string {
    this.#lastId += 1;
    const requestId = String(this.#lastId);
    this.#handlers.set(requestId, handler);
    return requestId;
  }

  /** Hands `answer` to the request it names; false when no such request is in flight. */
  settle(answer: RequestAnswer): boolean {
    const requestId = requestIdOf(answer);
    const handler = this.#handlers.get(requestId);
    if (handler === undefined) return false;
    this.#handlers.delete(requestId);
    handler.answer(answer);
    return true;
  }

  /** Ends one request in flight with `error`; false when it is not in flight. */
  fail(requestId: string, error: Error): boolean {
    const handler = this.#handlers.get(requestId);
    if (handler === undefined) return false;
    this.#handlers.delete(requestId);
    handler.end(error);
    return true;
  }

  /** Ends every request in flight with `error` (the session is over). */
  endAll(error: Error): void {
    const handlers = [...this.#handlers.values()];
    this.#handlers.clear();
    for (const handler of handlers) handler.end(error);
  }
}
