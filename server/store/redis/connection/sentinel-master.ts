import { Redis, type RedisOptions } from "ioredis";
import type { HostPort } from "./redis-connection.js";

/** One Sentinel's `SENTINEL MASTER name` answer: its fields by name (config-epoch, ip, port, …). */
export type SentinelMasterFields = (name: string) => string | undefined;

/**
 * Asks the Sentinel at `at` about master `masterName` on a short-lived connection (1 s connect and
 * command timeouts); undefined when it does not answer or does not know the master.
 */
export async function askSentinelMaster(
  at: HostPort,
  masterName: string,
  options: RedisOptions,
): Promise<SentinelMasterFields | undefined> {
  const sentinel = new Redis({ ...options, ...at, lazyConnect: true, connectTimeout: 1000, commandTimeout: 1000 });
  sentinel.on("error", () => {});
  try {
    await sentinel.connect();
    const reply = (await sentinel.call("SENTINEL", "MASTER", masterName)) as string[] | Record<string, string>;
    // RESP3 answers a map, RESP2 a flat list of names and values.
    return (name) => (Array.isArray(reply) ? reply[reply.indexOf(name) + 1] : reply[name]);
  } catch {
    return undefined;
  } finally {
    sentinel.disconnect();
  }
}

/** How long the Sentinels may take to replace a failed master: their down-after plus failover timeout. */
export interface SentinelFailoverTime {
  downAfterMs: number;
  failoverTimeoutMs: number;
  /** downAfterMs + failoverTimeoutMs. */
  totalMs: number;
}

/**
 * The failover time of `masterName` as the first Sentinel that answers configures it
 * (`down-after-milliseconds` + `failover-timeout`); undefined when none answers.
 */
export async function readSentinelFailoverTime(
  sentinels: HostPort[],
  masterName: string,
  options: RedisOptions,
): Promise<SentinelFailoverTime | undefined> {
  for (const at of sentinels) {
    const field = await askSentinelMaster(at, masterName, options);
    const downAfterMs = Number(field?.("down-after-milliseconds"));
    const failoverTimeoutMs = Number(field?.("failover-timeout"));
    if (Number.isFinite(downAfterMs) && Number.isFinite(failoverTimeoutMs)) {
      return { downAfterMs, failoverTimeoutMs, totalMs: downAfterMs + failoverTimeoutMs };
    }
  }
  return undefined;
}
