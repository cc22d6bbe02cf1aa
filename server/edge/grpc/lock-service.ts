import type { ServerDuplexStream } from "@grpc/grpc-js";
import type { LockServiceServer, SessionRequest, SessionResponse } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { toServerError } from "../../engine/server-error.js";
import { grpcStatusOf } from "../replies/failure-codes.js";
import type { SessionDeps } from "../session/session-deps.js";
import { SessionStream } from "../session/session-stream.js";
import { type LockAdmin, unary } from "./lock-admin.js";
import type { WatchDeps } from "./watch-stream.js";
import { WatchStream } from "./watch-stream.js";

/** What the handlers share: the session and watch dependencies and the admin RPCs. */
export type ServiceDeps = SessionDeps & WatchDeps & { admin: LockAdmin };

/** The gRPC handlers of turnstile.v1.LockService: thin adapters onto the classes that do the work. */
export function lockService(deps: ServiceDeps): LockServiceServer {
  const { admin, log, guard } = deps;
  const tracing = deps.traces?.tracing;
  return {
    session(call: ServerDuplexStream<SessionRequest, SessionResponse>) {
      const caller = authenticated(call, deps);
      if (caller !== undefined) new SessionStream(call, deps, caller);
    },
    watch(call) {
      // A bad name is refused naming the field and its limit before any grant is looked up for it.
      const readable = (who: string) =>
        guard.require(who, "read", deps.validator.name("watch.name", call.request.name));
      const caller = authenticated(call, deps, readable);
      if (caller !== undefined) new WatchStream(call, deps);
    },
    describe: unary((request, caller) => admin.describe(request, caller), log, guard, tracing, "Describe"),
    list: unary((request, caller) => admin.list(request, caller), log, guard, tracing, "List"),
    revoke: unary((request, caller, origin) => admin.revoke(request, caller, origin), log, guard, tracing, "Revoke"),
    checkFence: unary((request, caller) => admin.checkFence(request, caller), log, guard, tracing, "CheckFence"),
    requestRelease: unary((r, caller) => admin.requestRelease(r, caller), log, guard, tracing, "RequestRelease"),
  };
}

/**
 * The caller of a streaming call, after `check` passed; undefined when the call was refused, which
 * ends it with UNAUTHENTICATED (no or bad credentials) or PERMISSION_DENIED (`check` threw).
 */
function authenticated(
  call: Parameters<SessionDeps["guard"]["authenticate"]>[0] & { emit(event: "error", err: object): boolean },
  deps: ServiceDeps,
  check: (caller: string) => void = () => {},
): string | undefined {
  try {
    const caller = deps.guard.authenticate(call);
    check(caller);
    return caller;
  } catch (err) {
    const e = toServerError(err, "authenticate", deps.log);
    call.emit("error", { code: grpcStatusOf(e), details: e.message });
    return undefined;
  }
}
