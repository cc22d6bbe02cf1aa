import { formatDurationText } from "../../wire/duration-text.js";
import { DEFAULT_LIMITS, type Limits } from "./limits.js";

/** How a setting's text is read: see `parseSettingValue`. */
export type SettingKind =
  | "address"
  | "address-or-off"
  | "redis-url"
  | "host-list"
  | "text"
  | "level"
  | "duration"
  | "count"
  | "path"
  | "path-list"
  | "boolean"
  | "replica-acks";

/** One setting of `turnstile serve`: its flag (and config file key), env var, kind, default and help. */
export interface Setting {
  /** The flag without the leading --, which is also its key in the config file. */
  key: string;
  env: string;
  kind: SettingKind;
  /** The default as it would be written; absent: unset. */
  default?: string;
  /** The limit it sets, if it is one. */
  limit?: keyof Limits;
  /**
   * Set on a duration that never reaches a timer (fence-retention: a Redis PEXPIRE), which may
   * exceed the longest timer (MAX_TIMER_MS); every other duration is refused above it.
   */
  untimed?: true;
  /** Where `--help` lists it. */
  group: "Server" | "Security" | "Redis" | "Limits";
  help: string;
}

const duration = (ms: number) => formatDurationText(ms);

function limit(key: string, field: keyof Limits, kind: "duration" | "count", help: string): Setting {
  const value = DEFAULT_LIMITS[field];
  const env = `TURNSTILE_${key.toUpperCase().replaceAll("-", "_")}`;
  return {
    key,
    env,
    kind,
    default: kind === "duration" ? duration(value) : String(value),
    limit: field,
    group: "Limits",
    help,
  };
}

/** Every setting of `turnstile serve`, in the order `--help` lists them. */
export const SETTINGS: readonly Setting[] = [
  {
    key: "config",
    env: "TURNSTILE_CONFIG",
    kind: "path",
    group: "Server",
    help: "JSON file with any of these settings, keyed by flag name",
  },
  {
    key: "listen",
    env: "TURNSTILE_LISTEN",
    kind: "address",
    default: "127.0.0.1:7420",
    group: "Server",
    help: "HOST:PORT to serve gRPC on (port 0: any free port)",
  },
  {
    key: "metrics",
    env: "TURNSTILE_METRICS",
    kind: "address-or-off",
    default: "off",
    group: "Server",
    help: "serve Prometheus metrics at http://HOST:PORT/metrics, or off",
  },
  {
    key: "metrics-prefix-depth",
    env: "TURNSTILE_METRICS_PREFIX_DEPTH",
    kind: "count",
    default: "1",
    group: "Server",
    help: "label lock metrics by the name up to its Nth '/' (docs/operations.md)",
  },
  {
    key: "metrics-prefixes",
    env: "TURNSTILE_METRICS_PREFIXES",
    kind: "text",
    group: "Server",
    help: 'comma-separated prefixes to label lock metrics by instead (others: "other")',
  },
  {
    key: "otlp-endpoint",
    env: "TURNSTILE_OTLP_ENDPOINT",
    kind: "text",
    group: "Server",
    help: "export traces by OTLP/HTTP to URL/v1/traces (e.g. http://127.0.0.1:4318); absent: off",
  },
  {
    key: "otlp-sample-ratio",
    env: "TURNSTILE_OTLP_SAMPLE_RATIO",
    kind: "text",
    default: "1",
    group: "Server",
    help: "share of new traces recorded, 0 to 1 (a caller's trace keeps its own sampled flag)",
  },
  {
    key: "http",
    env: "TURNSTILE_HTTP",
    kind: "address-or-off",
    default: "off",
    group: "Server",
    help: "serve the web console at HOST:PORT (HTTPS with --tls-cert; loopback without security settings), or off",
  },
  {
    key: "log-level",
    env: "TURNSTILE_LOG_LEVEL",
    kind: "level",
    default: "info",
    group: "Server",
    help: "trace|debug|info|warn|error|fatal|silent",
  },
  {
    key: "shutdown-grace",
    env: "TURNSTILE_SHUTDOWN_GRACE",
    kind: "duration",
    default: "5s",
    group: "Server",
    help: "how long SIGTERM waits for streams to end before cutting them",
  },
  {
    key: "tls-cert",
    env: "TURNSTILE_TLS_CERT",
    kind: "path",
    group: "Security",
    help: "PEM certificate chain: serve gRPC over TLS (needs --tls-key)",
  },
  {
    key: "tls-key",
    env: "TURNSTILE_TLS_KEY",
    kind: "path",
    group: "Security",
    help: "PEM private key of --tls-cert",
  },
  {
    key: "tls-client-ca",
    env: "TURNSTILE_TLS_CLIENT_CA",
    kind: "path",
    group: "Security",
    help: "PEM CA(s): require client certificates they signed (mTLS)",
  },
  {
    key: "token-file",
    env: "TURNSTILE_TOKEN_FILE",
    kind: "path",
    group: "Security",
    help: "bearer tokens, one IDENTITY SHA256-HEX line each (docs/security.md)",
  },
  {
    key: "policy",
    env: "TURNSTILE_POLICY",
    kind: "path",
    group: "Security",
    help: "JSON grants of lock|read|admin on name prefixes; deny by default",
  },
  {
    key: "fencing-key",
    env: "TURNSTILE_FENCING_KEY",
    kind: "path-list",
    group: "Security",
    help: "Ed25519 PEM private key: sign a fencing proof into every grant (repeat: the first signs, the rest are older keys, only published; docs/fencing.md)",
  },
  {
    key: "fencing-issuer",
    env: "TURNSTILE_FENCING_ISSUER",
    kind: "text",
    default: "turnstile",
    group: "Security",
    help: "the iss claim of fencing proofs",
  },
  {
    key: "insecure",
    env: "TURNSTILE_INSECURE",
    kind: "boolean",
    default: "false",
    group: "Security",
    help: "allow plaintext on a non-loopback --listen (and --http) address",
  },
  {
    key: "redis",
    env: "TURNSTILE_REDIS_URL",
    kind: "redis-url",
    group: "Redis",
    help: "one Redis server: redis[s]://[[user]:password@]host:port[/db]",
  },
  {
    key: "redis-sentinel",
    env: "TURNSTILE_REDIS_SENTINEL",
    kind: "host-list",
    group: "Redis",
    help: "the Sentinels; needs --redis-master",
  },
  {
    key: "redis-master",
    env: "TURNSTILE_REDIS_MASTER",
    kind: "text",
    group: "Redis",
    help: "name of the master the Sentinels monitor",
  },
  {
    key: "redis-cluster",
    env: "TURNSTILE_REDIS_CLUSTER",
    kind: "host-list",
    group: "Redis",
    help: "some Redis Cluster nodes (the rest are discovered)",
  },
  {
    key: "redis-password",
    env: "TURNSTILE_REDIS_PASSWORD",
    kind: "text",
    group: "Redis",
    help: "password of the Redis servers; one in the URL wins",
  },
  {
    key: "redis-sentinel-password",
    env: "TURNSTILE_REDIS_SENTINEL_PASSWORD",
    kind: "text",
    group: "Redis",
    help: "password of the Sentinels, if they require one",
  },
  {
    key: "redis-tls",
    env: "TURNSTILE_REDIS_TLS",
    kind: "boolean",
    default: "false",
    group: "Redis",
    help: "connect with TLS (a rediss:// URL implies it)",
  },
  {
    key: "redis-tls-ca",
    env: "TURNSTILE_REDIS_TLS_CA",
    kind: "path",
    group: "Redis",
    help: "PEM file of the CA of Redis's certificate (default: system CAs)",
  },
  {
    key: "redis-command-timeout",
    env: "TURNSTILE_REDIS_COMMAND_TIMEOUT",
    kind: "duration",
    default: "2s",
    group: "Redis",
    help: "a Redis command slower than this fails as UNAVAILABLE",
  },
  {
    key: "redis-replica-acks",
    env: "TURNSTILE_REDIS_REPLICA_ACKS",
    kind: "replica-acks",
    group: "Redis",
    help: "replicas that hold each change before a client hears of it (default: majority with --redis-sentinel or --redis-cluster, else off)",
  },
  {
    key: "redis-replica-ack-timeout",
    env: "TURNSTILE_REDIS_REPLICA_ACK_TIMEOUT",
    kind: "duration",
    default: "1s",
    group: "Redis",
    help: "how long a change waits for its replicas before the request answers UNAVAILABLE",
  },
  {
    key: "fence-retention",
    env: "TURNSTILE_FENCE_RETENTION",
    kind: "duration",
    default: "30d",
    untimed: true,
    group: "Redis",
    help: "how long a fencing counter outlives its lock's last grant",
  },
  {
    key: "lock-delay",
    env: "TURNSTILE_LOCK_DELAY",
    kind: "text",
    group: "Limits",
    help: "lock-delay of acquires that set none, by name prefix: PREFIX=DURATION,... (longest prefix wins; <= 60s)",
  },
  limit("min-ttl", "minTtlMs", "duration", "shortest session TTL a client may ask for"),
  limit("max-ttl", "maxTtlMs", "duration", "longest session TTL a client may ask for"),
  limit("default-ttl", "defaultTtlMs", "duration", "session TTL when a client asks for none"),
  limit("max-wait", "maxWaitMs", "duration", "longest finite acquire wait (no wait: forever)"),
  limit("max-name-bytes", "maxNameBytes", "count", "longest lock name, in UTF-8 bytes"),
  limit("max-id-bytes", "maxIdBytes", "count", "longest owner, request id and client name, in UTF-8 bytes"),
  limit("max-value-bytes", "maxValueBytes", "count", "largest holder value, in bytes"),
  limit("max-shared-limit", "maxSharedLimit", "count", "largest SHARED limit"),
  limit("max-locks-per-session", "maxLocksPerSession", "count", "locks held plus acquires pending, per session"),
  limit("max-sessions", "maxSessions", "count", "open sessions per coordinator"),
  limit("max-message-bytes", "maxMessageBytes", "count", "largest message a client may send but an open, in bytes"),
  limit(
    "max-store-in-flight",
    "maxStoreInFlight",
    "count",
    "client requests with store work in flight, per coordinator",
  ),
  limit(
    "max-session-in-flight",
    "maxSessionInFlight",
    "count",
    "client requests with store work in flight, per session",
  ),
  limit("max-session-queue", "maxSessionQueue", "count", "requests of one session waiting for the store"),
  limit("max-unopened-streams", "maxUnopenedStreams", "count", "session streams that have not sent open yet"),
  limit("open-timeout", "openTimeoutMs", "duration", "time a new session stream has to send open"),
  limit("max-early-messages", "maxEarlyMessages", "count", "requests sent behind open before it is answered"),
  limit("max-streams-per-connection", "maxStreamsPerConnection", "count", "concurrent streams per client connection"),
  limit(
    "max-outbound-messages",
    "maxOutboundMessages",
    "count",
    "messages unread by a client before its stream is ended",
  ),
];
