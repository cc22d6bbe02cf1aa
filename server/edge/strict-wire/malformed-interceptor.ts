import { Metadata, ServerInterceptingCall, type ServerInterceptor, status } from "@grpc/grpc-js";
import { malformedProblem } from "./strict-service.js";

/**
 * Ends a unary or server-streaming call whose request `strictService` marked as unreadable with
 * INVALID_ARGUMENT naming what could not be read, before any handler sees it. Streams from the
 * client (Session) pass every message on: the session answers a malformed one itself (Failed).
 */
export const rejectMalformedRequests: ServerInterceptor = (method, call) =>
  new ServerInterceptingCall(call, {
    start: (next) =>
      next({
        onReceiveMessage: (message, pass) => {
          const problem = method.requestStream ? undefined : malformedProblem(message);
          if (problem === undefined) return pass(message);
          call.sendStatus({ code: status.INVALID_ARGUMENT, details: problem, metadata: new Metadata() });
        },
      }),
  });
