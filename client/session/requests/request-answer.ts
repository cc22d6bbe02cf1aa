import type {
  Acquired,
  AcquiredAll,
  Failed,
  Proclaimed,
  Released,
  ReleaseRequestSent,
  Transferred,
} from "../../../gen/ts/turnstile/v1/turnstile.js";

/**
 * The final answer to a request: `acquired`, `acquiredAll`, `released`, `proclaimed`, `transferred` or
 * `releaseRequestSent`, or `failed`.
 */
export type RequestAnswer =
  | { $case: "acquired"; acquired: Acquired }
  | { $case: "acquiredAll"; acquiredAll: AcquiredAll }
  | { $case: "released"; released: Released }
  | { $case: "proclaimed"; proclaimed: Proclaimed }
  | { $case: "transferred"; transferred: Transferred }
  | { $case: "releaseRequestSent"; releaseRequestSent: ReleaseRequestSent }
  | { $case: "failed"; failed: Failed };

/** Receives exactly one call: `answer` when the server answers, or `end` when the session ends. */
export interface RequestHandler {
  answer(answer: RequestAnswer): void;
  end(error: Error): void;
}

/**
 * Where requests in flight are registered by client-generated request id (SessionRequests). Ids
 * are unique for the life of the session object (not per stream), so a resumed session never
 * reuses one.
 */
export interface RequestRegistry {
  /** Registers `handler` under a fresh request id and returns the id. */
  add(handler: RequestHandler): string;
  /** Hands `answer` to the request it names; false when no such request is in flight. */
  settle(answer: RequestAnswer): boolean;
}
