import { pino } from "pino";
import { loadServeConfig, type ServeConfig } from "../config/serve-config.js";
import { serveUsage } from "../config/serve-usage.js";
import type { HostPort } from "../config/setting-value.js";
import { OPEN_ACCESS } from "../console/console-access.js";
import { ConsoleHttpHandler } from "../console/console-http-handler.js";
import { ConsoleHttpServer } from "../console/console-http-server.js";
import { Coordinator } from "../coordinator.js";
import { MetricsHttpServer } from "../metrics/metrics-http-server.js";
import { PrometheusMetrics } from "../metrics/prometheus-metrics.js";
import { MemoryStore } from "../store/memory/memory-store.js";
import { RedisStore } from "../store/redis/redis-store.js";
import type { Store } from "../store/store.js";

/**
 * `turnstile serve`: loads and validates the settings (exit 2 with one line per error), runs a
 * coordinator and, with --metrics, the Prometheus endpoint and, with --http, the web console (one
 * listener when both name the same address), until SIGTERM or SIGINT.
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
  const consoleHandler = config.http && consoleFor(coordinator, log);
  const shared = config.http && config.metrics && sameAddress(config.http, config.metrics);
  const metricsServer = metrics && new MetricsHttpServer(metrics, shared ? consoleHandler?.handle : undefined);
  const consoleServer = consoleHandler && !shared ? new ConsoleHttpServer(consoleHandler.handle) : undefined;
  const stopping = new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await coordinator.start();
  if (metricsServer && config.metrics) {
    const { host, port } = config.metrics;
    log.info({ metrics: `${host}:${port}`, metricsPort: await metricsServer.start(host, port) }, "serving metrics");
  }
  if (config.http && consoleHandler) {
    const { host, port } = config.http;
    const httpPort = consoleServer ? await consoleServer.start(host, port) : undefined;
    log.info({ http: `${host}:${port}`, httpPort, sharedWithMetrics: !consoleServer }, "serving the web console");
  }
  await stopping;
  log.info("shutting down");
  await metricsServer?.stop();
  await consoleServer?.stop();
  await coordinator.stop();
  return 0;
}

/** The web console over the coordinator; until the security policy is wired to it, open access (loopback only). */
function consoleFor(coordinator: Coordinator, log: pino.Logger): ConsoleHttpHandler {
  const { store, watches, admin, validator, limits } = coordinator;
  const loopbackOnly = true;
  return new ConsoleHttpHandler({ store, watches, admin, validator, limits, access: OPEN_ACCESS, log, loopbackOnly });
}

function sameAddress(a: HostPort, b: HostPort): boolean {
  return a.host === b.host && a.port === b.port;
}

function openStore(config: ServeConfig, log: pino.Logger): Store {
  if (!config.redis) {
    log.warn(
      "no Redis configured: using the embedded store (locks live in this process only; pass --redis, --redis-sentinel or --redis-cluster for durability and more coordinators)",
    );
    return new MemoryStore({ fenceRetainMs: config.fenceRetainMs });
  }
  const { target, auth, commandTimeoutMs } = config.redis;
  log.info({ redis: target.kind }, "keeping locks in Redis");
  return new RedisStore({ target, auth, commandTimeoutMs, fenceRetainMs: config.fenceRetainMs });
}
