import type { RedisAuth, RedisTarget } from "./redis-connection.js";

/** Settings of the Redis store. */
export interface RedisStoreOptions {
  /** A single server's URL; shorthand for `target: { kind: "url", url }`. */
  url?: string;
  /** Where Redis is: a URL, Sentinels or Cluster nodes (wins over `url`). */
  target?: RedisTarget;
  /** Password and TLS for Sentinel and Cluster targets. */
  auth?: RedisAuth;
  /** Key and channel prefix (default "turnstile"). */
  prefix?: string;
  /** How long a fencing counter outlives its lock's last grant (default 30 days). */
  fenceRetainMs?: number;
  /** Per-command timeout; a command over it fails as unavailable (default 2000 ms). */
  commandTimeoutMs?: number;
}
