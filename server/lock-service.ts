import type { ServerDuplexStream } from "@grpc/grpc-js";
import type { LockServiceServer, SessionRequest, SessionResponse } from "../gen/ts/turnstile/v1/turnstile.js";
import { type SessionDeps, SessionStream } from "./session-stream.js";

/** The gRPC handlers of turnstile.v1.LockService: each stream becomes one SessionStream. */
export function lockService(deps: SessionDeps): LockServiceServer {
  return {
    session(call: ServerDuplexStream<SessionRequest, SessionResponse>) {
      new SessionStream(call, deps);
    },
  };
}
