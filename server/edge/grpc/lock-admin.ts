import type { handleUnaryCall } from "@grpc/grpc-js";
import type { Logger } from "pino";
import {
  type CheckFenceRequest,
  type CheckFenceResponse,
  type DescribeRequest,
  type DescribeResponse,
  FenceStatus,
  type ListRequest,
  type ListResponse,
  type RequestReleaseRequest,
  type RequestReleaseResponse,
  type RevokeRequest,
  type RevokeResponse,
} from "../../../gen/ts/turnstile/v1/turnstile.js";
import { MAX_OPERATOR_CHARS, OPERATOR_METADATA } from "../../../wire/operator-metadata.js";
import { operatorRequester } from "../../engine/locks/hand-overs.js";
import { ServerError, toServerError } from "../../engine/server-error.js";
import { nameSessions } from "../../engine/sessions/session-names.js";
import { type Metrics, NO_METRICS } from "../../metrics/metrics.js";
import { Authorizer } from "../../security/authorizer.js";
import type { Store } from "../../store/store.js";
import { NO_TRACING, type Tracing } from "../../tracing/tracing.js";
import { grpcStatusOf } from "../replies/failure-codes.js";
import { LockStateReplies as reply } from "../replies/lock-state-replies.js";
import type { RequestValidator } from "../request-validator.js";

/** Where a unary call came from, beyond its verified identity: its peer address and the operator the caller claims to be. */
export interface CallOrigin {
  /** The peer's address as grpc-js reports it ("" when unknown). */
  peer: string;
  /** The CLI's `user@host` (OPERATOR_METADATA), unverified; "" when the call did not send one. */
  operator: string;
}

/**
 * The unary admin RPCs: Describe, List, Revoke, CheckFence and RequestRelease. Each validates its request,
 * checks the caller's grant (read, read, admin, read, admin), makes one store call and builds the answer; failures reject with a
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

  /**
   * Whether `fencing_token` is still current for `name`: CURRENT when a live hold has it, SUPERSEDED
   * (with the newest live hold's token) when a live hold has a newer one, UNKNOWN otherwise (the hold
   * ended and nobody newer holds the name, or the token was never issued). One store read.
   */
  async checkFence(request: CheckFenceRequest, caller = ""): Promise<CheckFenceResponse> {
    const name = this.validator.name("check_fence.name", request.name);
    if (request.fencingToken === 0n)
      throw new ServerError("invalid-argument", "check_fence.fencing_token: must be at least 1 (a token a grant gave)");
    this.guard.require(caller, "read", name);
    const { holders } = await this.store.describe(name);
    if (holders.some((h) => h.token === request.fencingToken))
      return { status: FenceStatus.FENCE_STATUS_CURRENT, newerFencingToken: 0n };
    const newest = holders.reduce((max, h) => (h.token > max ? h.token : max), 0n);
    if (newest > request.fencingToken)
      return { status: FenceStatus.FENCE_STATUS_SUPERSEDED, newerFencingToken: newest };
    return { status: FenceStatus.FENCE_STATUS_UNKNOWN, newerFencingToken: 0n };
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
  async revoke(request: RevokeRequest, caller = "", origin?: CallOrigin): Promise<RevokeResponse> {
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
    // Security off names nobody: then `by` is the operator the CLI says runs it, marked unverified, and the peer.
    const by = caller || origin?.operator || "unknown";
    const unverified = caller === "" && { verified: false, peer: origin?.peer ?? "" };
    this.log.info({ ...hold, token: String(outcome.token), by, ...unverified }, "hold revoked");
    this.metrics.revoked();
    return { fencingToken: outcome.token, holdCount: outcome.holdCount };
  }

  /** Asks every holder of a lock to let go (an operator's request: nothing is enforced); NOT_FOUND when nobody holds it. */
  async requestRelease(request: RequestReleaseRequest, caller = ""): Promise<RequestReleaseResponse> {
    const { name, reason } = this.validator.requestReleaseCall(request);
    this.guard.require(caller, "admin", name);
    const holders = await this.store.requestRelease({ name, requester: operatorRequester(caller), reason });
    if (holders === 0) throw new ServerError("not-found", `request_release: nobody holds "${name}"`);
    this.log.info({ name, reason, by: caller, holders }, "release requested");
    return { holders };
  }
}

/**
 * A grpc-js unary handler around `handler`: authenticates the caller first (UNAUTHENTICATED
 * without credentials when they are required); a failure ends the call with its ServerError's status.
 * With tracing on, the call is a server span named `method`, child of the caller's `traceparent`.
 */
export function unary<Req, Res>(
  handler: (request: Req, caller: string, origin: CallOrigin) => Promise<Res>,
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
      .within(span, () => handler(call.request, caller, originOf(call)))
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

/** The peer and the claimed operator of a call; the operator text kept printable and short. */
function originOf(call: Parameters<handleUnaryCall<unknown, unknown>>[0]): CallOrigin {
  const claimed = call.metadata.get(OPERATOR_METADATA)[0];
  const operator =
    typeof claimed === "string" ? claimed.replace(/[^\x20-\x7e]/g, "?").slice(0, MAX_OPERATOR_CHARS) : "";
  return { peer: call.getPeer(), operator };
}
