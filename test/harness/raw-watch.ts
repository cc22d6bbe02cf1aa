import { type ChannelCredentials, type ClientReadableStream, credentials, type ServiceError } from "@grpc/grpc-js";
import {
  type HolderEvent,
  LockServiceClient,
  type LockSnapshot,
  type WatchResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { EventWaiters } from "./event-waiters.js";

/** One Watch message, flattened: a snapshot or an event. */
export type WatchItem = { snapshot: LockSnapshot } | { event: HolderEvent };

/**
 * A bare Watch stream for protocol-level tests: buffers every message and lets a test wait for the
 * next one (or for the end of the stream) with a timeout. `pause()` stops reading, so the server's
 * messages back up behind gRPC flow control, as with a client that does not keep up.
 */
export class RawWatch {
  readonly client: LockServiceClient;
  readonly stream: ClientReadableStream<WatchResponse>;
  readonly received: WatchItem[] = [];
  ended?: { code: number; details: string };
  private readonly waiters = new EventWaiters();

  /** Starts watching `name` at `address` (plaintext unless `creds` say otherwise). */
  constructor(address: string, name: string, creds: ChannelCredentials = credentials.createInsecure()) {
    this.client = new LockServiceClient(address, creds);
    this.stream = this.client.watch({ name });
    this.stream.on("data", (r: WatchResponse) => {
      if (r.kind?.$case === "snapshot") this.received.push({ snapshot: r.kind.snapshot });
      if (r.kind?.$case === "event") this.received.push({ event: r.kind.event });
      this.waiters.notify();
    });
    this.stream.on("error", (err: ServiceError) => {
      this.ended ??= { code: err.code, details: err.details };
      this.waiters.notify();
    });
  }

  /** Resolves with the next message not yet taken; rejects after `timeoutMs`. */
  async next(timeoutMs = 5000): Promise<WatchItem> {
    await this.until(() => this.received.length > 0, "a watch message", timeoutMs);
    return this.received.shift()!;
  }

  /** The next message, which must be a snapshot. */
  async snapshot(timeoutMs = 5000): Promise<LockSnapshot> {
    const item = await this.next(timeoutMs);
    if (!("snapshot" in item)) throw new Error(`expected a snapshot, got ${describe(item)}`);
    return item.snapshot;
  }

  /** The next message, which must be an event. */
  async event(timeoutMs = 5000): Promise<HolderEvent> {
    const item = await this.next(timeoutMs);
    if (!("event" in item)) throw new Error(`expected an event, got ${describe(item)}`);
    return item.event;
  }

  /** Resolves with the status once the stream has ended. */
  async status(timeoutMs = 5000): Promise<{ code: number; details: string }> {
    await this.until(() => this.ended !== undefined, "the end of the watch", timeoutMs);
    return this.ended!;
  }

  pause(): void {
    this.stream.pause();
  }

  resume(): void {
    this.stream.resume();
  }

  /** Cancels the stream, closes the channel and ends every wait still pending (their timers with them). */
  close(): void {
    this.stream.cancel();
    this.client.close();
    this.waiters.cancel("the raw watch was closed");
  }

  private until(done: () => boolean, what: string, timeoutMs: number): Promise<void> {
    return this.waiters.until(
      done,
      timeoutMs,
      () => `timed out after ${timeoutMs} ms waiting for ${what}; have ${this.received.map(describe)}`,
    );
  }
}

function describe(item: WatchItem): string {
  if ("snapshot" in item) return `snapshot@${item.snapshot.version}`;
  return `${item.event.change}@${item.event.version}`;
}
