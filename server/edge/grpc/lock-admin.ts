import type { handleUnaryCall } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type {
  DescribeRequest,
  DescribeResponse,
  ListRequest,
  ListResponse,
  RevokeRequest,
  RevokeResponse,
} from "../../../gen/ts/turnstile/v1/turnstile.js";
import { ServerError, toServerError } from "../../engine/server-error.js";
import { nameSessions } from "../../engine/sessions/session-names.js";
import { type Metrics, NO_METRICS } from "../../metrics/metrics.js";
import { Authorizer } from "../../security/authorizer.js";
import type { Store } from "../../store/store.js";
import { NO_TRACING, type Tracing } from "../../tracing/tracing.js";
import { grpcStatusOf } from "../replies/failure-codes.js";
import { LockStateReplies as reply } from "../replies/lock-state-replies.js";
import type { RequestValidator } from "../request-validator.js";

/**
 * The unary admin RPCs: Describe, List and Revoke. Each validates its request, checks the caller's
 * grant (read, read, admin), makes one store call and builds the answer; failures reject with a
 * ServerError (see `unary` for the status). `caller` is the authenticated identity ("" when
 * security is off).
 */
export class LockAdmin {
  constructor(
    private readonly store: Store,
    private readonly validator: RequestValidator,
    private readonly log: Logger,
    private readonly guard: Authorizer = Authorizer.OPEN,
    private readonly metrics: Metrics = NO_METRICS,
  ) {}

  async describe(request: DescribeRequest, caller = ""): Promise<DescribeResponse> {
    const name = this.validator.name("describe.name", request.name);
    this.guard.require(caller, "read", name);
    // Client names and identities (empty when security is off) come from the session records.
    return reply.describe(await nameSessions(this.store, await this.store.describe(name)));
  }

  /** One page of active locks; with a policy, only names the caller may read (a page may then hold fewer). */
  async list(request: ListRequest, caller = ""): Promise<ListResponse> {
    const { prefix, pageSize, pageToken } = this.validator.list(request);
    const page = await this.store.list(prefix, pageSize, pageToken);
    if (page === "invalid-token") {
      throw new ServerError(
        "invalid-argument",
        "list.page_token: not a token this server issued for this prefix (start again with an empty token)",
      );
    }
    const readable = page.locks.filter((l) => this.guard.may(caller, "read", l.name));
    return { locks: readable.map(reply.summary), nextPageToken: page.nextPageToken };
  }

  /** Revokes one hold: its session is told Lost{REVOKED}, the lock goes to the next waiter. */
  async revoke(request: RevokeRequest, caller = ""): Promise<RevokeResponse> {
    const hold = this.validator.revoke(request);
    try {
      this.guard.require(caller, "admin", hold.name);
    } catch (err) {
      this.log.warn({ ...hold, by: caller }, "revoke refused: no admin grant");
      throw err;
    }
    const outcome = await this.store.revoke(hold);
    if (outcome.kind === "not-held") {
      throw new ServerError(
        "not-found",
        `revoke: session "${hold.sessionId}" owner "${hold.owner}" holds no live lease on "${hold.name}"`,
      );
    }
    this.log.info({ ...hold, token: String(outcome.token), by: caller }, "hold revoked");
    this.metrics.revoked();
    return { fencingToken: outcome.token, holdCount: outcome.holdCount };
  }
}

/**
 * A grpc-js unary handler around `handler`: authenticates the caller first (UNAUTHENTICATED
 * without credentials when they are required); a failure ends the call with its ServerError's status.
 * With tracing on, the call is a server span named `method`, child of the caller's `traceparent`.
 */
export function unary<Req, Res>(
  handler: (request: Req, caller: string) => Promise<Res>,
  log: Logger,
  guard: Authorizer = Authorizer.OPEN,
  tracing: Tracing = NO_TRACING,
  method = "unary",
): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    let caller: string;
    try {
      caller = guard.authenticate(call);
    } catch (err) {
      const e = toServerError(err, "authenticate", log);
      return callback({ code: grpcStatusOf(e), details: e.message });
    }
    const traceParent = tracing.enabled ? String(call.metadata.get("traceparent")[0] ?? "") : undefined;
    const span = tracing.start(`turnstile.v1.LockService/${method}`, { kind: "server", traceParent });
    tracing
      .within(span, () => handler(call.request, caller))
      .then(
        (response) => {
          span.end();
          callback(null, response);
        },
        (err) => {
          const e = toServerError(err, "unary call", log);
          span.end(e.message);
          callback({ code: grpcStatusOf(e), details: e.message });
        },
      );
  };
}
