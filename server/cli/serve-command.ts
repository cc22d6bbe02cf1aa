import { pino } from "pino";
import { loadServeConfig, type ServeConfig } from "../config/serve-config.js";
import { serveUsage } from "../config/serve-usage.js";
import type { HostPort } from "../config/setting-value.js";
import { OPEN_ACCESS } from "../console/access/console-access.js";
import { isLoopbackHost } from "../console/access/loopback-host.js";
import { PolicyAccess } from "../console/access/policy-access.js";
import { ConsoleHttpHandler } from "../console/console-http-handler.js";
import { ConsoleHttpServer } from "../console/console-http-server.js";
import { Coordinator } from "../coordinator.js";
import { MetricsHttpServer } from "../metrics/metrics-http-server.js";
import { PrometheusMetrics } from "../metrics/prometheus-metrics.js";
import { FencingKeys } from "../security/fencing/fencing-keys.js";
import { FencingSigner } from "../security/fencing/fencing-signer.js";
import { withJwks } from "../security/fencing/jwks-route.js";
import { Security } from "../security/security.js";
import { MemoryStore } from "../store/memory/memory-store.js";
import type { JournalReplayReport } from "../store/redis/journal/journal-replay.js";
import { RedisStore } from "../store/redis/redis-store.js";
import type { Store } from "../store/store.js";
import { checkTtlAgainstFailover } from "./failover-ttl-check.js";
import { routeGrpcJsLog } from "./grpc-js-log.js";
import { coordinatorFailure, listenFailure, ServeExit, type StartUpFailure } from "./start-up-failure.js";

/**
 * `turnstile serve`: loads and validates the settings (exit 2 with one line per error), runs a
 * coordinator and, with --metrics, the Prometheus endpoint and, with --http, the web console (one
 * listener when both name the same address), until SIGTERM or SIGINT. SIGHUP re-reads the
 * security files (TLS certificates, tokens, policy). A start-up failure is one JSON log line and an
 * exit code from ServeExit.
 */
export async function run(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(serveUsage());
    return 0;
  }
  const result = loadServeConfig({ argv, env: process.env });
  if (!result.ok) {
    for (const error of result.errors) process.stderr.write(`turnstile serve: ${error}\n`);
    pino().fatal({ errors: result.errors, exitCode: ServeExit.settings }, "cannot start: invalid settings");
    return ServeExit.settings;
  }
  const { config } = result;
  const log = pino({ level: config.logLevel });
  routeGrpcJsLog(log);
  const metrics = config.metrics ? new PrometheusMetrics({ prefixes: config.metricsPrefixes }) : undefined;
  let security: Security;
  let fencingKeys: FencingKeys | undefined;
  try {
    fencingKeys = config.fencing && FencingKeys.load(config.fencing.keyFiles);
    security = config.security ? Security.load(config.security, log) : Security.open();
  } catch (err) {
    // Unreadable or invalid security files are settings errors: one line on stderr, one in the log.
    const message = (err as Error).message;
    process.stderr.write(`turnstile serve: ${message}\n`);
    log.fatal({ errors: [message], exitCode: ServeExit.settings }, "cannot start: invalid settings");
    return ServeExit.settings;
  }
  if (config.security?.tokenFile && !config.security.tls)
    log.warn("bearer tokens over plaintext: anyone on the path can read them; serve with --tls-cert and --tls-key");
  if (config.security && !config.security.policyFile && (config.security.tokenFile || config.security.tls?.clientCa))
    log.warn("no --policy: every authenticated caller may lock, read and revoke every name");
  const onHangup = () => security.reload();
  process.on("SIGHUP", onHangup);
  // The OpenTelemetry SDK is imported only here, only when an endpoint is configured.
  const tracing = config.otlpEndpoint
    ? await (await import("../tracing/otel-tracing.js")).startOtelTracing(
        { endpoint: config.otlpEndpoint },
        {
          sampleRatio: config.otlpSampleRatio,
          // Tracing problems never stop the coordinator: one warning, with the endpoint.
          onProblem: (problem) =>
            log.warn({ otlpEndpoint: config.otlpEndpoint, problem }, "tracing: spans not exported"),
        },
      )
    : undefined;
  if (config.otlpEndpoint)
    log.info({ otlpEndpoint: config.otlpEndpoint, sampleRatio: config.otlpSampleRatio }, "exporting traces");
  const coordinator = new Coordinator({
    store: openStore(config, log),
    log,
    listen: config.listen,
    limits: config.limits,
    lockDelays: config.lockDelays,
    shutdownGraceMs: config.shutdownGraceMs,
    metrics,
    tracing,
    security,
    fencing: fencingKeys && config.fencing && new FencingSigner(fencingKeys.signing, config.fencing.issuer),
  });
  if (fencingKeys)
    log.info(
      { signingKid: fencingKeys.signing.kid, publishedKids: fencingKeys.published.map((k) => k.kid) },
      config.http
        ? "signing fencing proofs; keys at GET /.well-known/jwks.json on --http"
        : "signing fencing proofs (no --http: the keys are not served)",
    );
  const console = config.http && consoleFor(coordinator, config.http.host, log);
  const consoleHandler = console && { handle: fencingKeys ? withJwks(fencingKeys, console.handle) : console.handle };
  const shared = config.http && config.metrics && sameAddress(config.http, config.metrics);
  const metricsServer = metrics && new MetricsHttpServer(metrics, shared ? consoleHandler?.handle : undefined);
  const consoleServer =
    consoleHandler && !shared ? new ConsoleHttpServer(consoleHandler.handle, security.tls) : undefined;
  const stopping = new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  const failed = async (failure: StartUpFailure) => {
    log.fatal({ exitCode: failure.exitCode, err: failure.err, hint: failure.hint }, failure.msg);
    // Said on stderr too, for a person at a terminal; the log line is for the supervisor.
    if (failure.hint)
      process.stderr.write(`turnstile serve: ${failure.msg.replace(/^cannot start: /, "")}: ${failure.hint}\n`);
    await tracing?.shutdown();
    return failure.exitCode;
  };
  // HTTP listeners first: a taken port must stop the start before the coordinator says "listening".
  if (metricsServer && config.metrics) {
    const { host, port } = config.metrics;
    try {
      log.info({ metrics: `${host}:${port}`, metricsPort: await metricsServer.start(host, port) }, "serving metrics");
    } catch (err) {
      return failed(listenFailure("metrics", `${host}:${port}`, err));
    }
  }
  if (config.http && consoleHandler) {
    const { host, port } = config.http;
    try {
      const httpPort = consoleServer ? await consoleServer.start(host, port) : undefined;
      const https = consoleServer?.secure ?? false;
      log.info(
        { http: `${host}:${port}`, httpPort, https, sharedWithMetrics: !consoleServer },
        "serving the web console",
      );
    } catch (err) {
      await metricsServer?.stop();
      return failed(listenFailure("web console", `${host}:${port}`, err));
    }
  }
  try {
    await coordinator.start();
  } catch (err) {
    await metricsServer?.stop();
    await consoleServer?.stop();
    return failed(coordinatorFailure(config.listen, err));
  }
  void checkTtlAgainstFailover(config, log);
  await stopping;
  log.info("shutting down");
  await metricsServer?.stop();
  await consoleServer?.stop();
  await coordinator.stop();
  await tracing?.shutdown();
  process.off("SIGHUP", onHangup);
  return ServeExit.stopped;
}

/**
 * The web console over the coordinator. With identities in force (token file, client CA) its callers
 * are named by their bearer token and checked against the same policy as gRPC callers; otherwise it
 * is open, as the gRPC port is. The Host check against DNS rebinding applies on a loopback address.
 */
function consoleFor(coordinator: Coordinator, host: string, log: pino.Logger): ConsoleHttpHandler {
  const { store, watches, admin, validator, limits, security } = coordinator;
  const access = security.authorizer.enforcing ? new PolicyAccess(security.authorizer) : OPEN_ACCESS;
  const loopbackOnly = isLoopbackHost(host);
  return new ConsoleHttpHandler({ store, watches, admin, validator, limits, access, log, loopbackOnly });
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
  const { target, replicaAcks } = config.redis;
  log.info({ redis: target.kind, replicaAcks }, "keeping locks in Redis");
  const onJournalReplay = (report: JournalReplayReport) =>
    log.info(report, "release journal replayed on the new master");
  return new RedisStore({ ...config.redis, fenceRetainMs: config.fenceRetainMs, onJournalReplay });
}
