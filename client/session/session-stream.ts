import type { ClientDuplexStream, StatusObject } from "@grpc/grpc-js";
import type { LockServiceClient, SessionRequest, SessionResponse } from "../../gen/ts/turnstile/v1/turnstile.js";
import type { TurnstileError } from "../turnstile-error.js";
import { errorFromStatus } from "./status-error.js";
import type { FinalStatus } from "./stream-end.js";

/** What a SessionStream reports: every server message, then the end exactly once. */
export interface SessionStreamHandlers {
  message(message: SessionResponse): void;
  /** The stream is over; `error` is derived from its final gRPC status `final` (if it had one). */
  ended(error: TurnstileError, final: FinalStatus | undefined): void;
}

/**
 * One `Session` bidi call: writes requests while the write side is open and reports the stream's
 * end exactly once, after every message it delivered. It never throws on write; writes after the
 * end are dropped.
 */
export class SessionStream {
  /** Resolves when the stream is over (never rejects). */
  readonly done: Promise<void>;
  readonly #call: ClientDuplexStream<SessionRequest, SessionResponse>;
  #writable = true;

  /** Starts the call at once; the first thing to send is `open`. */
  constructor(rpc: LockServiceClient, handlers: SessionStreamHandlers) {
    const call = rpc.session();
    this.#call = call;
    let final: FinalStatus | undefined;
    let finished = false;
    let markDone: () => void = () => {};
    this.done = new Promise<void>((resolve) => {
      markDone = resolve;
    });
    const onData = (message: SessionResponse) => handlers.message(message);
    const onEnd = () => {
      if (finished) return;
      finished = true;
      call.off("data", onData);
      call.off("end", onEnd);
      call.off("status", onStatus);
      this.end();
      handlers.ended(errorFromStatus(final), final);
      markDone();
    };
    const onStatus = (status: StatusObject) => {
      final ??= status;
      // 'end' follows once buffered messages are read; this is the backstop if it never comes.
      setImmediate(onEnd);
    };
    call.on("data", onData);
    call.on("end", onEnd);
    call.on("status", onStatus);
    // Stays attached for good: an unhandled 'error' event would crash the process.
    call.on("error", (error: Partial<FinalStatus>) => {
      if (typeof error.code === "number") {
        final ??= { code: error.code, details: error.details ?? "" };
      }
    });
  }

  /** True while requests can still be written. */
  get writable(): boolean {
    return this.#writable;
  }

  /** Writes one request; false (and nothing sent) once the write side is closed. */
  send(kind: SessionRequest["kind"]): boolean {
    if (!this.#writable) return false;
    this.#call.write({ kind });
    return true;
  }

  /** Half-closes the write side; the server's answers keep arriving until it ends the stream. */
  end(): void {
    if (!this.#writable) return;
    this.#writable = false;
    this.#call.end();
  }

  /** Cancels the call; the end is then reported with status CANCELLED. */
  cancel(): void {
    this.#writable = false;
    this.#call.cancel();
  }
}
