import type { ClientDuplexStream, StatusObject } from "@grpc/grpc-js";
import {
  type LockServiceClient,
  LockServiceService,
  SessionRequest,
  type SessionResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { REQUEST_LIMITS } from "../../wire/request-limits.js";
import { TurnstileError } from "../turnstile-error.js";
import { errorFromStatus } from "./status-error.js";
import type { FinalStatus } from "./stream-end.js";

/** What a SessionStream reports: every server message, then the end exactly once. */
export interface SessionStreamHandlers {
  message(message: SessionResponse): void;
  /** The stream is over; `error` is derived from its final gRPC status `final` (if it had one). */
  ended(error: TurnstileError, final: FinalStatus | undefined): void;
  /** `kind` could not be encoded ('invalid-argument' saying why): nothing was written, the stream goes on. */
  unencodable?(kind: Kind, error: TurnstileError): void;
}

/** How many requests a SessionStream queues behind a full write buffer before it gives up on the stream. */
const DEFAULT_MAX_QUEUED = 10_000;

/** The largest request a SessionStream writes by default: a coordinator's default --max-message-bytes. */
export const DEFAULT_MAX_REQUEST_BYTES = REQUEST_LIMITS.maxMessageBytes;

type Kind = SessionRequest["kind"];

const { path: SESSION_PATH, responseDeserialize } = LockServiceService.session;

// Requests are encoded by send(), so the call writes the bytes as they are.
const asEncoded = (bytes: Buffer): Buffer => bytes;

/**
 * One `Session` bidi call: writes requests while the write side is open and reports the stream's
 * end exactly once, after every message it delivered. It never throws on write; writes after the
 * end are dropped. It respects backpressure: once `write()` says the call's buffer is full, later
 * requests wait in order until 'drain' (a keepalive goes first, the newest one only, so a flood of
 * acquires cannot starve the lease). Past `maxQueued` waiting requests the coordinator is taken to
 * be stuck: the stream is cancelled and ends with a 'connection' error saying so; the session then
 * resumes elsewhere and re-sends its acquires and releases, so nothing is lost. A request that cannot
 * be encoded (a field of the wrong type) is not written and is reported to `unencodable`: it fails
 * alone instead of breaking the stream (gRPC would cancel the call over it).
 */
export class SessionStream {
  /** Resolves when the stream is over (never rejects). */
  readonly done: Promise<void>;
  readonly #call: ClientDuplexStream<Buffer, SessionResponse>;
  readonly #handlers: SessionStreamHandlers;
  readonly #maxQueued: number;
  readonly #maxRequestBytes: number;
  readonly #queue: Buffer[] = [];
  #keepAlive: Buffer | undefined;
  #waitingForDrain = false;
  #overflow: TurnstileError | undefined;
  #writable = true;

  /** Starts the call at once; the first thing to send is `open`. */
  constructor(
    rpc: LockServiceClient,
    handlers: SessionStreamHandlers,
    options: { maxQueued?: number; maxRequestBytes?: number } = {},
  ) {
    this.#maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
    this.#maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
    this.#handlers = handlers;
    const call = rpc.makeBidiStreamRequest(SESSION_PATH, asEncoded, responseDeserialize);
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
      this.#dropQueue();
      this.end();
      handlers.ended(this.#overflow ?? errorFromStatus(final), final);
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

  /** Requests waiting for the call's write buffer to drain (0 while writes go straight through). */
  get queued(): number {
    return this.#queue.length + (this.#keepAlive === undefined ? 0 : 1);
  }

  /**
   * Writes one request, or queues it while the call's buffer is full; false (and nothing sent)
   * once the write side is closed, or when it cannot be encoded (then told to `unencodable` first).
   */
  send(kind: Kind): boolean {
    if (!this.#writable) return false;
    const bytes = this.#encode(kind);
    if (bytes === undefined) return false;
    if (!this.#waitingForDrain) {
      this.#write(bytes);
    } else if (kind?.$case === "keepAlive") {
      // Only the newest keepalive matters: its ack confirms every keepalive sent before it.
      this.#keepAlive = bytes;
    } else if (this.#queue.length < this.#maxQueued) {
      this.#queue.push(bytes);
    } else {
      const message = `session stream: ${this.#queue.length} requests waited for the coordinator to read (the limit); reconnecting`;
      this.#overflow = new TurnstileError("connection", message);
      this.cancel();
      return false;
    }
    return true;
  }

  /**
   * Half-closes the write side once the queued requests are written; the server's answers keep
   * arriving until it ends the stream.
   */
  end(): void {
    if (!this.#writable) return;
    this.#writable = false;
    if (this.queued === 0) this.#call.end();
  }

  /** Cancels the call (queued requests are dropped); the end is then reported with status CANCELLED. */
  cancel(): void {
    this.#writable = false;
    this.#dropQueue();
    this.#call.cancel();
  }

  #encode(kind: Kind): Buffer | undefined {
    let bytes: Uint8Array;
    try {
      bytes = SessionRequest.encode({ kind }).finish();
    } catch (cause) {
      const why = cause instanceof Error ? cause.message : String(cause);
      const message = `${requestLabel(kind)}: cannot be encoded (${why}); nothing was sent`;
      this.#handlers.unencodable?.(kind, new TurnstileError("invalid-argument", message, { cause }));
      return undefined;
    }
    // A coordinator ends the whole stream over a message past its --max-message-bytes: a request is
    // refused here alone. An open is sent as it is: refusing it would end nothing but the attempt,
    // where the coordinator's RESOURCE_EXHAUSTED says what is wrong.
    if (bytes.byteLength > this.#maxRequestBytes && kind?.$case !== "open") {
      const message = `${requestLabel(kind)}: ${bytes.byteLength} bytes, over the ${this.#maxRequestBytes}-byte maximum a coordinator reads (serve --max-message-bytes; client option maxRequestBytes); nothing was sent`;
      this.#handlers.unencodable?.(kind, new TurnstileError("invalid-argument", message));
      return undefined;
    }
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  #write(bytes: Buffer): void {
    if (this.#call.write(bytes)) return;
    this.#waitingForDrain = true;
    this.#call.once("drain", this.#onDrain);
  }

  readonly #onDrain = (): void => {
    this.#waitingForDrain = false;
    while (!this.#waitingForDrain && this.queued > 0) {
      const next = this.#keepAlive ?? this.#queue.shift();
      this.#keepAlive = undefined;
      if (next !== undefined) this.#write(next);
    }
    if (!this.#waitingForDrain && !this.#writable) this.#call.end();
  };

  #dropQueue(): void {
    this.#queue.length = 0;
    this.#keepAlive = undefined;
    this.#waitingForDrain = false;
    this.#call.off("drain", this.#onDrain);
  }
}

/** A request as errors name it: the wire's field name (`acquire_all request`), as the coordinator's do. */
function requestLabel(kind: Kind): string {
  return `${(kind?.$case ?? "empty").replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)} request`;
}
