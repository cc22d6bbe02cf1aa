import { accessSync, constants } from "node:fs";
import type { SecuritySettings } from "../security/security.js";
import type { RedisAuth, RedisTarget } from "../store/redis/connection/redis-connection.js";
import { DEFAULT_LIMITS, type Limits } from "./limits.js";
import { loadSettings, type SettingSources } from "./load-settings.js";
import { type LockDelays, parseLockDelays } from "./lock-delay-setting.js";
import { securityConfig } from "./security-config.js";
import { formatHostPort, type HostPort, type SettingValue } from "./setting-value.js";
import { SETTINGS } from "./settings.js";

/** Everything `turnstile serve` runs with, validated. */
export interface ServeConfig {
  /** HOST:PORT for gRPC. */
  listen: string;
  /** Where to serve Prometheus metrics; absent: off. */
  metrics?: HostPort;
  /** How lock metrics are labelled by name prefix: a list, else the first `depth` segments. */
  metricsPrefixes: { depth: number; prefixes?: string[] };
  /** OTLP/HTTP base URL to export traces to; absent: tracing off. */
  otlpEndpoint?: string;
  /** Share of new traces recorded (head sampling), 0 to 1; a caller's trace follows its own flag. */
  otlpSampleRatio: number;
  /** Where to serve the web console (may equal `metrics`: one listener serves both); absent: off. */
  http?: HostPort;
  logLevel: string;
  shutdownGraceMs: number;
  /** Where Redis is; absent: the embedded store. */
  redis?: {
    target: RedisTarget;
    auth: RedisAuth;
    commandTimeoutMs: number;
    /** Replicas each change waits for (0: off), or "majority" of those the Sentinels know. */
    replicaAcks: number | "majority";
    replicaAckTimeoutMs: number;
  };
  fenceRetainMs: number;
  limits: Limits;
  /** Lock-delay in ms of acquires that set none, by name prefix (`--lock-delay`); empty: none. */
  lockDelays: LockDelays;
  /** `--fencing-key` files (the first signs) and the proofs' issuer; absent: grants carry no proof. */
  fencing?: { keyFiles: string[]; issuer: string };
  /** TLS, tokens, policy (docs/security.md); absent: plaintext and open to every caller. */
  security?: SecuritySettings;
}

/** The config, or one line per error (exit 2). */
export type ServeConfigResult = { ok: true; config: ServeConfig } | { ok: false; errors: string[] };

/**
 * Loads the settings (flag > env > config file > default) and checks them together: one Redis
 * deployment at most, Sentinel with its master name, TTL bounds in order, readable files, and the
 * security settings (see `securityConfig`).
 */
export function loadServeConfig(sources: SettingSources): ServeConfigResult {
  const loaded = loadSettings(sources);
  if (!loaded.ok) return loaded;
  const v = loaded.values;
  const get = <T extends SettingValue>(key: string) => v.get(key) as T;
  const has = (key: string) => v.has(key);
  const errors: string[] = [];

  const deployments = ["redis", "redis-sentinel", "redis-cluster"].filter(has);
  if (deployments.length > 1)
    errors.push(`redis: ${deployments.map((k) => `--${k}`).join(" and ")} are alternatives: set only one`);
  if (has("redis-sentinel") !== has("redis-master"))
    errors.push("redis-master: --redis-sentinel and --redis-master go together: set both or neither");
  if (has("redis-tls-ca")) {
    try {
      accessSync(get<string>("redis-tls-ca"), constants.R_OK);
    } catch (err) {
      errors.push(`redis-tls-ca: cannot read ${get<string>("redis-tls-ca")} (${(err as NodeJS.ErrnoException).code})`);
    }
  }
  const limits: Limits = { ...DEFAULT_LIMITS };
  for (const s of SETTINGS) if (s.limit) limits[s.limit] = get<number>(s.key);
  if (limits.minTtlMs > limits.defaultTtlMs || limits.defaultTtlMs > limits.maxTtlMs)
    errors.push(
      `default-ttl: min-ttl (${limits.minTtlMs} ms) <= default-ttl (${limits.defaultTtlMs} ms) <= max-ttl (${limits.maxTtlMs} ms) does not hold`,
    );
  const http = get<HostPort | "off">("http");
  if (get<number>("redis-command-timeout") === 0) errors.push("redis-command-timeout: must be more than 0");
  const acks = v.get("redis-replica-acks") as number | "majority" | "off" | undefined;
  if (acks === "majority" && !has("redis-sentinel") && !has("redis-cluster"))
    errors.push(
      "redis-replica-acks: majority needs --redis-sentinel or --redis-cluster (which know the replicas): give a count or off",
    );
  const ackTimeoutMs = get<number>("redis-replica-ack-timeout");
  if (acks !== undefined && acks !== "off" && ackTimeoutMs >= get<number>("redis-command-timeout"))
    errors.push("redis-replica-ack-timeout: must be shorter than --redis-command-timeout");
  const prefixes = has("metrics-prefixes") ? get<string>("metrics-prefixes").split(",") : undefined;
  if (prefixes?.some((p) => p.trim() === "")) errors.push("metrics-prefixes: an empty prefix in the list");
  const otlp = v.get("otlp-endpoint") as string | undefined;
  if (otlp !== undefined && !/^https?:\/\/[^/]+/.test(otlp))
    errors.push(`otlp-endpoint: expected an http:// or https:// URL, got ${JSON.stringify(otlp)}`);
  const sampleText = get<string>("otlp-sample-ratio").trim();
  const sampleRatio = /^(0|1|0?\.\d+|1\.0*)$/.test(sampleText) ? Number(sampleText) : Number.NaN;
  if (Number.isNaN(sampleRatio))
    errors.push(`otlp-sample-ratio: expected a number from 0 to 1, got ${JSON.stringify(sampleText)}`);
  const lockDelays = parseLockDelays(v.get("lock-delay") as string | undefined, errors);
  const security = securityConfig(v, errors);
  for (const file of (v.get("fencing-key") as string[] | undefined) ?? []) {
    try {
      accessSync(file, constants.R_OK);
    } catch (err) {
      errors.push(`fencing-key: cannot read ${file} (${(err as NodeJS.ErrnoException).code})`);
    }
  }
  if (errors.length > 0) return { ok: false, errors };

  let target: RedisTarget | undefined;
  if (has("redis")) target = { kind: "url", url: get<string>("redis") };
  if (has("redis-sentinel"))
    target = {
      kind: "sentinel",
      sentinels: get<HostPort[]>("redis-sentinel"),
      masterName: get<string>("redis-master"),
    };
  if (has("redis-cluster")) target = { kind: "cluster", nodes: get<HostPort[]>("redis-cluster") };
  const auth: RedisAuth = {
    password: v.get("redis-password") as string | undefined,
    sentinelPassword: v.get("redis-sentinel-password") as string | undefined,
    tls: get<boolean>("redis-tls"),
    tlsCaFile: v.get("redis-tls-ca") as string | undefined,
  };
  const metrics = get<HostPort | "off">("metrics");
  return {
    ok: true,
    config: {
      listen: formatHostPort(get<HostPort>("listen")),
      metrics: metrics === "off" ? undefined : metrics,
      metricsPrefixes: { depth: get<number>("metrics-prefix-depth"), prefixes: prefixes?.map((p) => p.trim()) },
      otlpEndpoint: otlp,
      otlpSampleRatio: sampleRatio,
      http: http === "off" ? undefined : http,
      logLevel: get<string>("log-level"),
      shutdownGraceMs: get<number>("shutdown-grace"),
      redis: target && {
        target,
        auth,
        commandTimeoutMs: get<number>("redis-command-timeout"),
        replicaAcks: acks === "off" ? 0 : (acks ?? (target.kind === "url" ? 0 : "majority")),
        replicaAckTimeoutMs: ackTimeoutMs,
      },
      fenceRetainMs: get<number>("fence-retention"),
      ...(has("fencing-key") && {
        fencing: { keyFiles: get<string[]>("fencing-key"), issuer: get<string>("fencing-issuer") },
      }),
      limits,
      lockDelays,
      ...(Object.values(security).some((x) => x !== undefined) && { security }),
    },
  };
}
