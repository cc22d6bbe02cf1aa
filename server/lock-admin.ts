import type { handleUnaryCall } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type {
  DescribeRequest,
  DescribeResponse,
  ListRequest,
  ListResponse,
  RevokeRequest,
  RevokeResponse,
} from "../gen/ts/turnstile/v1/turnstile.js";
import { LockStateReplies as reply } from "./lock-state-replies.js";
import type { RequestValidator } from "./request-validator.js";
import { ServerError, toServerError } from "./server-error.js";
import type { Store } from "./store/store.js";

/**
 * The unary admin RPCs: Describe, List and Revoke. Each validates its request, makes one store
 * call and builds the answer; failures reject with a ServerError (see `unary` for the status).
 */
export class LockAdmin {
  constructor(
    private readonly store: Store,
    private readonly validator: RequestValidator,
    private readonly log: Logger,
  ) {}

  async describe(request: DescribeRequest): Promise<DescribeResponse> {
    const name = this.validator.name("describe.name", request.name);
    return reply.describe(await this.store.describe(name));
  }

  async list(request: ListRequest): Promise<ListResponse> {
    const { prefix, pageSize, pageToken } = this.validator.list(request);
    const page = await this.store.list(prefix, pageSize, pageToken);
    if (page === "unsupported") throw new ServerError("failed-precondition", "list: not supported on Redis Cluster");
    if (page === "invalid-token") {
      throw new ServerError(
        "invalid-argument",
        "list.page_token: not a token this server issued for this prefix (start again with an empty token)",
      );
    }
    return { locks: page.locks.map(reply.summary), nextPageToken: page.nextPageToken };
  }

  /** Revokes one hold: its session is told Lost{REVOKED}, the lock goes to the next waiter. */
  async revoke(request: RevokeRequest): Promise<RevokeResponse> {
    const hold = this.validator.revoke(request);
    const outcome = await this.store.revoke(hold);
    if (outcome.kind === "not-held") {
      throw new ServerError(
        "not-found",
        `revoke: session "${hold.sessionId}" owner "${hold.owner}" holds no live lease on "${hold.name}"`,
      );
    }
    this.log.info({ ...hold, token: String(outcome.token) }, "hold revoked");
    return { fencingToken: outcome.token, holdCount: outcome.holdCount };
  }
}

/** A grpc-js unary handler around `handler`; a failure ends the call with its ServerError's status. */
export function unary<Req, Res>(handler: (request: Req) => Promise<Res>, log: Logger): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    handler(call.request).then(
      (response) => callback(null, response),
      (err) => {
        const e = toServerError(err, "unary call", log);
        callback({ code: e.grpcStatus, details: e.message });
      },
    );
  };
}
