import type { ChannelCredentials, ChannelOptions } from "@grpc/grpc-js";
import { LockServiceClient } from "../../gen/ts/turnstile/v1/turnstile.js";
import { traceInterceptor } from "../trace-context.js";
import { TurnstileError } from "../turnstile-error.js";

/**
 * Channel settings of every coordinator address. HTTP/2 pings every 5 s (answer within 2.5 s, also
 * with no call open) notice a half-open connection within ~7.5 s, well inside a 15 s lease; the
 * coordinator permits pings every 4 s. gRPC's own reconnect backoff is capped at 2 s so a
 * coordinator that comes back is tried again soon. Channelz (grpc-js's per-call and per-message
 * bookkeeping for an admin service nobody here serves) is off: it costs on every message.
 */
export const CHANNEL_OPTIONS: ChannelOptions = {
  "grpc.enable_channelz": 0,
  "grpc.keepalive_time_ms": 5_000,
  "grpc.keepalive_timeout_ms": 2_500,
  "grpc.keepalive_permit_without_calls": 1,
  "grpc.initial_reconnect_backoff_ms": 100,
  "grpc.max_reconnect_backoff_ms": 2_000,
};

/**
 * The coordinator addresses of one client and one gRPC channel per address, created on first use.
 * `addressAt(n)` rotates through the list, so attempt n goes to address n mod length.
 */
export class ChannelPool {
  /** The coordinator addresses (host:port), in the order they are tried. */
  readonly addresses: readonly string[];
  /** True when the channels dial TLS. */
  readonly secure: boolean;
  readonly #credentials: ChannelCredentials;
  readonly #channels = new Map<string, LockServiceClient>();
  #closed = false;

  /** Throws a TurnstileError ('invalid-argument') for an empty list or an empty address. */
  constructor(addresses: string | readonly string[], credentials: ChannelCredentials) {
    const list = typeof addresses === "string" ? [addresses] : [...addresses];
    if (list.length === 0) {
      throw new TurnstileError("invalid-argument", "address: at least one coordinator address is needed");
    }
    for (const address of list) {
      if (typeof address !== "string" || address.trim() === "") {
        throw new TurnstileError("invalid-argument", `address: expected "host:port", got ${JSON.stringify(address)}`);
      }
    }
    this.addresses = list;
    this.#credentials = credentials;
    this.secure = credentials._isSecure();
  }

  /** The address of attempt `n` (0-based): the list, round and round. */
  addressAt(n: number): string {
    return this.addresses[n % this.addresses.length];
  }

  /** The channel to `address`, created (without connecting) on first use. */
  channel(address: string): LockServiceClient {
    if (this.#closed) throw new TurnstileError("session-ended", "the client is closed");
    let channel = this.#channels.get(address);
    if (channel === undefined) {
      channel = new LockServiceClient(address, this.#credentials, {
        ...CHANNEL_OPTIONS,
        interceptors: [traceInterceptor],
      });
      this.#channels.set(address, channel);
    }
    return channel;
  }

  /** Closes every channel; later `channel()` calls throw. */
  close(): void {
    this.#closed = true;
    for (const channel of this.#channels.values()) channel.close();
    this.#channels.clear();
  }
}
