import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";
import { Cluster, Redis, type RedisOptions } from "ioredis";
import { reconnectDelayMs } from "./reconnect-delay.js";

/** One host:port of a Sentinel or Cluster node. */
export interface HostPort {
  host: string;
  port: number;
}

/**
 * Where the Redis store keeps its locks: one server by URL (`redis://` or `rediss://` for TLS,
 * password and db in the URL), the master a set of Sentinels monitors, or a Redis Cluster.
 */
export type RedisTarget =
  | { kind: "url"; url: string }
  | { kind: "sentinel"; sentinels: HostPort[]; masterName: string }
  | { kind: "cluster"; nodes: HostPort[] };

/** Credentials and TLS for any target (a URL's own password wins). */
export interface RedisAuth {
  /** Password of the Redis servers. */
  password?: string;
  /** Password of the Sentinels themselves, when they require one. */
  sentinelPassword?: string;
  /** Connect with TLS (implied by a `rediss://` URL). */
  tls?: boolean;
  /** PEM file of the CA that signed the servers' certificates (default: the system CAs). */
  tlsCaFile?: string;
}

/** Where the store connects and how: what its connections need of the store's settings. */
export interface ConnectionSettings {
  /** A single server's URL; shorthand for `target: { kind: "url", url }`. */
  url?: string;
  /** Where Redis is: a URL, Sentinels or Cluster nodes (wins over `url`). */
  target?: RedisTarget;
  /** Password and TLS for Sentinel and Cluster targets. */
  auth?: RedisAuth;
  /** Per-command timeout; a command over it fails as unavailable (default 2000 ms). */
  commandTimeoutMs?: number;
}

/** A connection to any target: both kinds run the scripts and pub/sub the same way. */
export type RedisClient = Redis | Cluster;

/**
 * Opens (lazily) one client for the target with the given command settings. A Sentinel client
 * follows failovers (+switch-master) and reconnects when its server turns read-only, so it finds
 * the new master; a Cluster client follows slot moves.
 */
export function createRedisClient(target: RedisTarget, auth: RedisAuth, common: RedisOptions): RedisClient {
  const tls = tlsOptions(target, auth);
  // A demoted master answers READONLY: reconnecting asks the Sentinels for the new master.
  const reconnectOnError = (err: Error) => err.message.startsWith("READONLY");
  switch (target.kind) {
    case "url":
      // A password in the URL wins over auth.password.
      return new Redis(target.url, { ...common, password: auth.password, tls, reconnectOnError });
    case "sentinel":
      return new Redis({
        ...common,
        sentinels: target.sentinels,
        name: target.masterName,
        password: auth.password,
        sentinelPassword: auth.sentinelPassword,
        tls,
        enableTLSForSentinelMode: tls !== undefined,
        failoverDetector: true,
        // On +switch-master the detector ends the socket; a frozen old master never closes its side,
        // and ioredis reconnects only once the socket closed (after 2 s by default): destroy it soon.
        disconnectTimeout: 100,
        reconnectOnError,
        sentinelRetryStrategy: reconnectDelayMs,
      });
    case "cluster": {
      const { retryStrategy, enableOfflineQueue, lazyConnect, ...redisOptions } = common;
      return new Cluster(target.nodes, {
        lazyConnect,
        enableOfflineQueue,
        clusterRetryStrategy: (attempt) => retryStrategy?.(attempt) ?? null,
        // While a slot migrates, a script on a lock whose keys are split (or absent on the importing node)
        // answers TRYAGAIN until the slot has moved: retry for about 2 s (ioredis: 16 tries, 100 ms apart).
        retryDelayOnTryAgain: 20,
        maxRedirections: 100,
        redisOptions: { ...redisOptions, password: auth.password, tls },
      });
    }
  }
}

function tlsOptions(target: RedisTarget, auth: RedisAuth): ConnectionOptions | undefined {
  const wanted = auth.tls || (target.kind === "url" && target.url.startsWith("rediss://"));
  if (!wanted) return undefined;
  return auth.tlsCaFile ? { ca: readFileSync(auth.tlsCaFile) } : {};
}
