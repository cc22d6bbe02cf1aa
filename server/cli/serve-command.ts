import { pino } from "pino";
import { loadServeConfig, type ServeConfig } from "../config/serve-config.js";
import { serveUsage } from "../config/serve-usage.js";
import { Coordinator } from "../coordinator.js";
import { MetricsHttpServer } from "../metrics/metrics-http-server.js";
import { PrometheusMetrics } from "../metrics/prometheus-metrics.js";
import { MemoryStore } from "../store/memory/memory-store.js";
import { RedisStore } from "../store/redis/redis-store.js";
import type { Store } from "../store/store.js";

/**
 * `turnstile serve`: loads and validates the settings (exit 2 with one line per error), runs a
 * coordinator and, with --metrics, the Prometheus endpoint, until SIGTERM or SIGINT.
 */
export async function run(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(serveUsage());
    return 0;
  }
  const result = loadServeConfig({ argv, env: process.env });
  if (!result.ok) {
    for (const error of result.errors) process.stderr.write(`turnstile serve: ${error}\n`);
    return 2;
  }
  const { config } = result;
  const log = pino({ level: config.logLevel });
  const metrics = config.metrics ? new PrometheusMetrics() : undefined;
  const coordinator = new Coordinator({
    store: openStore(config, log),
    log,
    listen: config.listen,
    limits: config.limits,
    shutdownGraceMs: config.shutdownGraceMs,
    metrics,
  });
  const metricsServer = metrics && new MetricsHttpServer(metrics);
  const stopping = new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await coordinator.start();
  if (metricsServer && config.metrics) {
    const { host, port } = config.metrics;
    log.info({ metrics: `${host}:${port}`, metricsPort: await metricsServer.start(host, port) }, "serving metrics");
  }
  await stopping;
  log.info("shutting down");
  await metricsServer?.stop();
  await coordinator.stop();
  return 0;
}

function openStore(config: ServeConfig, log: pino.Logger): Store {
  if (!config.redis) {
    log.warn(
      "no Redis configured: using the embedded store (locks live in this process only; pass --redis, --redis-sentinel or --redis-cluster for durability and more coordinators)",
    );
    return new MemoryStore({ fenceRetainMs: config.fenceRetainMs });
  }
  const { target, replicaAcks } = config.redis;
  log.info({ redis: target.kind, replicaAcks }, "keeping locks in Redis");
  return new RedisStore({ ...config.redis, fenceRetainMs: config.fenceRetainMs });
}
