import { StoreUnavailableError } from "../../store-unavailable-error.js";
import { commandOptions } from "./command-options.js";
import { reviveOnEnd } from "./connection-reviver.js";
import { type ConnectionSettings, createRedisClient, type RedisClient } from "./redis-connection.js";

/**
 * The Redis store's two connections: `redis` runs the scripts, `events` is subscribed (pub/sub
 * takes a connection of its own). Both connect lazily in `connect()`, are reconnected when ioredis
 * ends them for good, and report every status change to `onStatus` so the store's health follows.
 */
export class StoreConnections {
  readonly redis: RedisClient;
  readonly events: RedisClient;
  private lastError?: Error;
  private stopReviving = () => {};

  constructor(options: ConnectionSettings, onStatus: () => void) {
    const target = options.target ?? (options.url ? { kind: "url" as const, url: options.url } : undefined);
    if (!target) throw new TypeError("RedisStore: give a url or a target");
    const common = commandOptions(options);
    const auth = options.auth ?? {};
    this.redis = createRedisClient(target, auth, common);
    // The subscriber waits for messages indefinitely: no command timeout there.
    this.events = createRedisClient(target, auth, { ...common, commandTimeout: undefined });
    for (const client of [this.redis, this.events]) {
      // Errors surface through rejected commands and readiness; without listeners ioredis logs them.
      client.on("error", (err: Error) => {
        this.lastError = err;
      });
      for (const event of ["ready", "close", "end", "reconnecting"]) client.on(event, onStatus);
    }
  }

  /** True while both connections can run commands. */
  get ready(): boolean {
    return this.redis.status === "ready" && this.events.status === "ready";
  }

  /** Connects both; rejects with StoreUnavailableError naming why (auth, TLS, refused, ...). */
  async connect(): Promise<void> {
    await Promise.all([this.redis.connect(), this.events.connect()]).catch((err: Error) => {
      // connect() rejects with "Connection is closed."; the error event said why.
      const why = this.lastError?.message ?? err.message;
      throw new StoreUnavailableError(`redis: cannot connect: ${why}`, { cause: err });
    });
    this.stopReviving = reviveOnEnd(this.redis, this.events); // ioredis may end them for good: reconnect
  }

  /** Disconnects both for good (no revival). */
  close(): void {
    this.stopReviving();
    this.redis.disconnect();
    this.events.disconnect();
  }
}
