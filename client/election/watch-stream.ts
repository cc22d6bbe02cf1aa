import { type ClientReadableStream, type StatusObject, status } from "@grpc/grpc-js";
import type { LockServiceClient, WatchResponse } from "../../gen/ts/turnstile/v1/turnstile.js";
import { raceSignal } from "../race-signal.js";
import { errorFromStatus, readableDetails } from "../session/status-error.js";
import { TurnstileError } from "../turnstile-error.js";

// Stop reading (so gRPC flow control holds the rest back) past this many unread messages; the
// server then replaces what it cannot send with a fresh snapshot once we read again.
const PAUSE_AT = 64;
const RESUME_AT = 16;

/**
 * One `Watch` call: its messages in order through `next()`, and the end of the stream as a
 * rejection. It never throws on its own; `cancel()` ends it (then `next()` rejects 'cancelled').
 */
export class WatchStream {
  readonly #call: ClientReadableStream<WatchResponse>;
  readonly #name: string;
  readonly #inbox: WatchResponse[] = [];
  #ended: TurnstileError | undefined;
  #paused = false;
  #wake: (() => void) | undefined;

  /** Starts the call at once. */
  constructor(rpc: LockServiceClient, name: string) {
    this.#name = name;
    this.#call = rpc.watch({ name });
    this.#call.on("data", (response: WatchResponse) => {
      this.#inbox.push(response);
      if (this.#inbox.length >= PAUSE_AT && !this.#paused) {
        this.#paused = true;
        this.#call.pause();
      }
      this.#wake?.();
    });
    // Stays attached for good: an unhandled 'error' event would crash the process.
    this.#call.on("error", (error: Partial<StatusObject>) => this.#end(error));
    this.#call.on("status", (final: StatusObject) => this.#end(final));
  }

  /**
   * Resolves with the next message. Rejects with a TurnstileError once the stream is over and
   * every message was taken ('connection' when the server ended it, e.g. draining; others as
   * its status says), and with `signal.reason` on abort (the stream goes on).
   */
  async next(options: { signal?: AbortSignal } = {}): Promise<WatchResponse> {
    while (this.#inbox.length === 0) {
      if (this.#ended) throw this.#ended;
      await raceSignal(
        new Promise<void>((resolve) => {
          this.#wake = resolve;
        }),
        options.signal,
      ).finally(() => {
        this.#wake = undefined;
      });
    }
    return this.#take()!;
  }

  /** The next message already received, or undefined; never waits. */
  poll(): WatchResponse | undefined {
    return this.#take();
  }

  /** Ends the call (idempotent). */
  cancel(): void {
    this.#call.cancel();
  }

  #take(): WatchResponse | undefined {
    const response = this.#inbox.shift();
    if (this.#paused && this.#inbox.length <= RESUME_AT) {
      this.#paused = false;
      this.#call.resume();
    }
    return response;
  }

  #end(final: Partial<StatusObject>): void {
    if (this.#ended) return;
    const code = final.code ?? status.UNKNOWN;
    const ended = errorFromStatus({ code, details: final.details ?? "" });
    // A watch has no natural end: an OK status is the server going away like any other.
    const reason = code === status.OK ? "connection" : ended.reason;
    const message = `watch of "${this.#name}" ended: ${status[code] ?? code} ${readableDetails(final.details)}`.trim();
    this.#ended = new TurnstileError(reason, message, { cause: final });
    this.#wake?.();
  }
}
