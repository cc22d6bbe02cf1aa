import type { StoreListener } from "../../store.js";
import type { RedisClient } from "../connection/redis-connection.js";
import { parseLockEvent, parseReleaseRequest, parseRevocation } from "./lock-event-parser.js";
import { eventChannel, releaseRequestChannel, revocationChannel } from "./lock-keys.js";

/**
 * The holder changes of watched locks and the revocation and release-request broadcasts, on the store's pub/sub
 * connection: one subscription per watched lock name (the coordinator's watch hub asks once per
 * name, however many clients watch it). ioredis re-subscribes after a reconnect by itself.
 */
export class EventFeed {
  private readonly names = new Map<string, string>();
  private readonly revocations: string;
  private readonly releaseRequests: string;

  /** `subscribeTimeoutMs` bounds a watch's SUBSCRIBE (this connection has no command timeout). */
  constructor(
    private readonly events: RedisClient,
    private readonly prefix: string,
    private readonly subscribeTimeoutMs: number,
  ) {
    this.revocations = revocationChannel(prefix);
    this.releaseRequests = releaseRequestChannel(prefix);
  }

  /** Routes messages to `listener`; call once, before `start` subscribes. */
  attach(listener: StoreListener): void {
    this.events.on("messageBuffer", (channel: Buffer, message: Buffer) => {
      const name = this.names.get(channel.toString());
      if (name !== undefined) listener.event(parseLockEvent(name, message));
    });
    this.events.on("message", (channel: string, message: string) => {
      if (channel === this.revocations) listener.revoked(parseRevocation(message));
      else if (channel === this.releaseRequests) listener.releaseRequested?.(parseReleaseRequest(message));
    });
  }

  /** Subscribes to the revocation and release-request broadcasts. */
  async start(): Promise<void> {
    await this.events.subscribe(this.revocations, this.releaseRequests);
  }

  async watch(name: string): Promise<void> {
    const channel = eventChannel(this.prefix, name);
    this.names.set(channel, name);
    // A stalled Redis never answers: give up after the command timeout, so the watch can be told
    // UNAVAILABLE. The SUBSCRIBE stays queued; the unwatch that follows is queued behind it.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`SUBSCRIBE not answered within ${this.subscribeTimeoutMs} ms`)),
        this.subscribeTimeoutMs,
      );
    });
    try {
      await Promise.race([this.events.subscribe(channel), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async unwatch(name: string): Promise<void> {
    const channel = eventChannel(this.prefix, name);
    this.names.delete(channel);
    await this.events.unsubscribe(channel);
  }
}
