import type { ServerDuplexStream } from "@grpc/grpc-js";
import type { LockServiceServer, SessionRequest, SessionResponse } from "../gen/ts/turnstile/v1/turnstile.js";
import { type LockAdmin, unary } from "./lock-admin.js";
import { type SessionDeps, SessionStream } from "./session-stream.js";
import type { WatchDeps } from "./watch/watch-stream.js";
import { WatchStream } from "./watch/watch-stream.js";

/** What the handlers share: the session and watch dependencies and the admin RPCs. */
export type ServiceDeps = SessionDeps & WatchDeps & { admin: LockAdmin };

/** The gRPC handlers of turnstile.v1.LockService: thin adapters onto the classes that do the work. */
export function lockService(deps: ServiceDeps): LockServiceServer {
  return {
    session(call: ServerDuplexStream<SessionRequest, SessionResponse>) {
      new SessionStream(call, deps);
    },
    watch(call) {
      new WatchStream(call, deps);
    },
    describe: unary((request) => deps.admin.describe(request), deps.log, deps.traces?.tracing, "Describe"),
    list: unary((request) => deps.admin.list(request), deps.log, deps.traces?.tracing, "List"),
    revoke: unary((request) => deps.admin.revoke(request), deps.log, deps.traces?.tracing, "Revoke"),
  };
}
