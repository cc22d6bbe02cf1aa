import type { RedisOptions } from "ioredis";
import { reconnectDelayMs } from "./reconnect-delay.js";
import type { ConnectionSettings } from "./redis-connection.js";

/** The ioredis settings of the store's connections: fail fast (no offline queue, no retries), reconnect with backoff. */
export function commandOptions(options: Pick<ConnectionSettings, "commandTimeoutMs">): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 2000,
    retryStrategy: reconnectDelayMs,
  };
}
