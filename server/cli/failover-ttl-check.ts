import type { Logger } from "pino";
import type { ServeConfig } from "../config/serve-config.js";
import { epochSourceOf } from "../store/redis/connection/master-epoch.js";
import { readSentinelFailoverTime } from "../store/redis/connection/sentinel-master.js";

/**
 * With Sentinels, reads how long they may take to replace a failed master (`down-after-milliseconds`
 * + `failover-timeout` of the monitored master) and logs it once at start: a warning when the
 * default session TTL is shorter (sessions lose their locks, and their records may expire, in a
 * failover that takes that long; docs/operations.md), else an info line. Never throws.
 */
export async function checkTtlAgainstFailover(config: ServeConfig, log: Logger): Promise<void> {
  const target = config.redis?.target;
  if (target?.kind !== "sentinel") return;
  const source = epochSourceOf(target, config.redis?.auth ?? {});
  if (source.kind !== "sentinel") return;
  const time = await readSentinelFailoverTime(source.sentinels, source.masterName, source.options).catch(
    () => undefined,
  );
  if (!time) {
    log.info({ masterName: target.masterName }, "could not read the Sentinels' failover time (no Sentinel answered)");
    return;
  }
  const { defaultTtlMs, minTtlMs } = config.limits;
  const { downAfterMs, failoverTimeoutMs, totalMs } = time;
  const fields = { defaultTtlMs, minTtlMs, downAfterMs, failoverTimeoutMs, sentinelFailoverMs: totalMs };
  if (defaultTtlMs >= totalMs) {
    log.info(fields, "the default session TTL covers the Sentinels' failover time");
    return;
  }
  log.warn(
    fields,
    `session TTL below the Sentinels' failover time: default-ttl ${defaultTtlMs} ms < down-after ${downAfterMs} ms + failover-timeout ${failoverTimeoutMs} ms; a failover that long ends sessions' locks (raise --default-ttl or lower the Sentinels' timings)`,
  );
}
