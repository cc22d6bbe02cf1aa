import type { ClientDuplexStream, StatusObject } from "@grpc/grpc-js";
import type { LockServiceClient, SessionRequest, SessionResponse } from "../../gen/ts/turnstile/v1/turnstile.js";
import { TurnstileError } from "../turnstile-error.js";
import { errorFromStatus } from "./status-error.js";
import type { FinalStatus } from "./stream-end.js";

/** What a SessionStream reports: every server message, then the end exactly once. */
export interface SessionStreamHandlers {
  message(message: SessionResponse): void;
  /** The stream is over; `error` is derived from its final gRPC status `final` (if it had one). */
  ended(error: TurnstileError, final: FinalStatus | undefined): void;
}

/** How many requests a SessionStream queues behind a full write buffer before it gives up on the stream. */
const DEFAULT_MAX_QUEUED = 10_000;

type Kind = SessionRequest["kind"];

/**
 * One `Session` bidi call: writes requests while the write side is open and reports the stream's
 * end exactly once, after every message it delivered. It never throws on write; writes after the
 * end are dropped. It respects backpressure: once `write()` says the call's buffer is full, later
 * requests wait in order until 'drain' (a keepalive goes first, the newest one only, so a flood of
 * acquires cannot starve the lease). Past `maxQueued` waiting requests the coordinator is taken to
 * be stuck: the stream is cancelled and ends with a 'connection' error saying so; the session then
 * resumes elsewhere and re-sends its acquires and releases, so nothing is lost.
 */
export class SessionStream {
  /** Resolves when the stream is over (never rejects). */
  readonly done: Promise<void>;
  readonly #call: ClientDuplexStream<SessionRequest, SessionResponse>;
  readonly #maxQueued: number;
  readonly #queue: Kind[] = [];
  #keepAlive: Kind | undefined;
  #waitingForDrain = false;
  #overflow: TurnstileError | undefined;
  #writable = true;

  /** Starts the call at once; the first thing to send is `open`. */
  constructor(rpc: LockServiceClient, handlers: SessionStreamHandlers, options: { maxQueued?: number } = {}) {
    this.#maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
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
   * once the write side is closed.
   */
  send(kind: Kind): boolean {
    if (!this.#writable) return false;
    if (!this.#waitingForDrain) {
      this.#write(kind);
    } else if (kind?.$case === "keepAlive") {
      // Only the newest keepalive matters: its ack confirms every keepalive sent before it.
      this.#keepAlive = kind;
    } else if (this.#queue.length < this.#maxQueued) {
      this.#queue.push(kind);
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

  #write(kind: Kind): void {
    if (this.#call.write({ kind })) return;
    this.#waitingForDrain = true;
    this.#call.once("drain", this.#onDrain);
  }

  readonly #onDrain = (): void => {
    this.#waitingForDrain = false;
    while (!this.#waitingForDrain && this.queued > 0) {
      const next = this.#keepAlive ?? this.#queue.shift();
      this.#keepAlive = undefined;
      this.#write(next);
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
