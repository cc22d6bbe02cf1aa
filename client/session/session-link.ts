import { status } from "@grpc/grpc-js";
import type { Open, Opened, SessionRequest, SessionResponse } from "../../gen/ts/turnstile/v1/turnstile.js";
import { Backoff, type BackoffOptions } from "../connection/backoff.js";
import type { ChannelPool } from "../connection/channel-pool.js";
import { withTransportHint } from "../connection/transport-hint.js";
import type { MonotonicClock } from "../locks/lease-clock.js";
import { type LongTimeout, setLongTimeout } from "../long-timeout.js";
import { raceSignal } from "../race-signal.js";
import { TurnstileError } from "../turnstile-error.js";
import { SessionStream } from "./session-stream.js";
import type { FinalStatus } from "./stream-end.js";

/** What a SessionLink asks and tells its session. */
export interface SessionLinkHandlers {
  /** Builds the `open` of the next attempt; called just before it is written. */
  open(): Open;
  /** The current stream answered `opened`; `send` writes from now on. */
  opened(opened: Opened, attempt: { address: string; openSentAtMs: number }): void;
  /** Any later message of the current stream. */
  message(message: SessionResponse): void;
  /** The current stream ended; `wasOpened` says whether it had answered `opened`. */
  ended(error: TurnstileError, final: FinalStatus | undefined, wasOpened: boolean): void;
  /** A request `send` was given could not be encoded: it was not sent, and the stream goes on. */
  unencodable(kind: SessionRequest["kind"], error: TurnstileError): void;
}

/** `error` with the hint of a TLS/plaintext mix-up its status suggests (see transportHint). */
function hinted(error: TurnstileError, final: FinalStatus | undefined, secure: boolean): TurnstileError {
  if (final === undefined || error.reason !== "connection") return error;
  const message = withTransportHint(error.message, final.details, secure);
  return message === error.message ? error : new TurnstileError(error.reason, message, { cause: error.cause });
}

/**
 * How long an attempt waits for the coordinator's `opened` by default, in ms: a coordinator that
 * accepts TCP but never answers (stopped, blackholed, not a Turnstile coordinator) costs each
 * attempt this much at most, so a first open over N addresses ends within about N times this.
 */
export const DEFAULT_OPEN_TIMEOUT_MS = 5000;

/**
 * The session's connection to the coordinator fleet: one stream at a time, attempt n to address n
 * mod N, spaced by a jittered exponential backoff that restarts once a stream opens. Requests are
 * written only while the current stream is opened; others are dropped (the session re-sends what
 * matters after a resume). Messages and ends of replaced streams are ignored. An attempt not answered
 * `opened` within `openTimeoutMs` is cancelled and ends with a 'connection' error naming its address.
 */
export class SessionLink {
  readonly #channels: ChannelPool;
  readonly #backoff: Backoff;
  readonly #now: MonotonicClock;
  readonly #handlers: SessionLinkHandlers;
  #attempts = 0;
  #stream: SessionStream | undefined;
  #address = "";
  #opened = false;
  // Long timeouts: a backoff maxMs or an openTimeoutMs past 2^31-1 ms must not fire at once.
  #timer: LongTimeout | undefined;
  #openTimer: LongTimeout | undefined;
  readonly #openTimeoutMs: number;
  readonly #maxRequestBytes: number | undefined;

  constructor(
    channels: ChannelPool,
    options: {
      backoff?: BackoffOptions;
      random?: () => number;
      now: MonotonicClock;
      openTimeoutMs?: number;
      maxRequestBytes?: number;
    },
    handlers: SessionLinkHandlers,
  ) {
    this.#channels = channels;
    this.#openTimeoutMs = options.openTimeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS;
    this.#maxRequestBytes = options.maxRequestBytes;
    this.#backoff = new Backoff(options.backoff, options.random);
    this.#now = options.now;
    this.#handlers = handlers;
  }

  /** True while the current stream has answered `opened`. */
  get opened(): boolean {
    return this.#opened;
  }

  /** The address of the current (or last) stream. */
  get address(): string {
    return this.#address;
  }

  /**
   * Schedules the next attempt: at once ('now'), or after the next backoff delay ('backoff').
   * Ignored while a stream or an attempt is already under way.
   */
  connect(when: "now" | "backoff"): void {
    if (this.#stream !== undefined || this.#timer !== undefined) return;
    const delayMs = when === "now" ? 0 : this.#backoff.nextDelayMs();
    // Not unref'd: a caller awaiting a pending acquire must keep the process alive while reconnecting.
    this.#timer = setLongTimeout(() => {
      this.#timer = undefined;
      this.#attempt();
    }, delayMs);
  }

  /**
   * Writes one request on the opened stream; false (nothing sent) while there is none, or when the
   * request cannot be encoded (then told to the `unencodable` handler first).
   */
  send(kind: SessionRequest["kind"]): boolean {
    return this.#opened && this.#stream?.send(kind) === true;
  }

  /**
   * Sends `close` on the opened stream and resolves when the stream has ended; without one it
   * just stops. On abort it cancels the stream and rejects with `signal.reason`.
   */
  async close(signal: AbortSignal | undefined): Promise<void> {
    const stream = this.#stream;
    if (!this.#opened || stream === undefined) return this.stop();
    this.#detach();
    // No half-close: the server ends the stream once it has released everything.
    stream.send({ $case: "close", close: {} });
    try {
      await raceSignal(stream.done, signal);
    } catch (error) {
      stream.cancel();
      throw error;
    }
  }

  /** Stops for good: no more attempts, and the current stream (if any) is cancelled. */
  stop(): void {
    this.#timer?.clear();
    this.#timer = undefined;
    this.#detach()?.cancel();
  }

  #detach(): SessionStream | undefined {
    this.#openTimer?.clear();
    this.#openTimer = undefined;
    const stream = this.#stream;
    this.#stream = undefined;
    this.#opened = false;
    return stream;
  }

  #attempt(): void {
    const address = this.#channels.addressAt(this.#attempts);
    this.#attempts += 1;
    this.#address = address;
    const stream: SessionStream = new SessionStream(
      this.#channels.channel(address),
      {
        message: (message) => {
          if (this.#stream !== stream) return;
          if (this.#opened) return this.#handlers.message(message);
          // Nothing but `opened` can come first: no request is written before it.
          if (message.kind?.$case !== "opened") return;
          this.#opened = true;
          this.#openTimer?.clear();
          this.#openTimer = undefined;
          this.#backoff.reset();
          this.#handlers.opened(message.kind.opened, { address, openSentAtMs });
        },
        ended: (error, final) => {
          if (this.#stream !== stream) return;
          const wasOpened = this.#opened;
          this.#detach();
          this.#handlers.ended(hinted(error, final, this.#channels.secure), final, wasOpened);
        },
        unencodable: (kind, error) => this.#handlers.unencodable(kind, error),
      },
      { maxRequestBytes: this.#maxRequestBytes },
    );
    this.#stream = stream;
    // Not unref'd either: it ends the attempt, and so a first open, behind a silent coordinator.
    this.#openTimer = setLongTimeout(() => this.#openTimedOut(stream, address), this.#openTimeoutMs);
    const open = this.#handlers.open();
    // Noted before the write: the lease confirmed by this open is measured from no later than its send.
    const openSentAtMs = this.#now();
    stream.send({ $case: "open", open });
  }

  /** The attempt on `stream` got no `opened` in time: it is cancelled and ends as a broken connection. */
  #openTimedOut(stream: SessionStream, address: string): void {
    if (this.#stream !== stream || this.#opened) return;
    this.#detach();
    stream.cancel();
    const details = `${address} did not answer the session's open within ${this.#openTimeoutMs} ms (coordinator stopped, blackholed, or not a Turnstile coordinator)`;
    const error = new TurnstileError("connection", details);
    this.#handlers.ended(error, { code: status.UNAVAILABLE, details }, false);
  }
}
