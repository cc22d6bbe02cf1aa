import { Server, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { LockServiceService } from "../gen/ts/turnstile/v1/turnstile.js";
import { DEFAULT_LIMITS, type Limits, largestOpenBytes } from "./config/limits.js";
import { LockAdmin } from "./edge/grpc/lock-admin.js";
import { lockService } from "./edge/grpc/lock-service.js";
import { addReflection } from "./edge/grpc/reflection.js";
import { StoreHealthService } from "./edge/grpc/store-health-service.js";
import { logTransportMismatches } from "./edge/grpc/transport-mismatch.js";
import { RequestValidator } from "./edge/request-validator.js";
import { OpenIntake } from "./edge/session/open-intake.js";
import { SessionSlots } from "./edge/session/session-slots.js";
import type { SessionStream } from "./edge/session/session-stream.js";
import { StoreAdmission } from "./edge/session/store-admission.js";
import { rejectMalformedRequests } from "./edge/strict-wire/malformed-interceptor.js";
import { strictService } from "./edge/strict-wire/strict-service.js";
import { SessionKeeper } from "./engine/lifecycle/session-keeper.js";
import { LockDelayDefaults } from "./engine/lock-delay-defaults.js";
import { HandOvers } from "./engine/locks/hand-overs.js";
import { HoldChanges } from "./engine/locks/hold-changes.js";
import { LockTable } from "./engine/locks/lock-table.js";
import { StoreEvents } from "./engine/locks/store-events.js";
import { WatchHub } from "./engine/locks/watch-hub.js";
import { InstrumentedStore } from "./metrics/instrumented-store.js";
import type { Metrics } from "./metrics/metrics.js";
import type { FencingSigner } from "./security/fencing/fencing-signer.js";
import { Security } from "./security/security.js";
import type { Store } from "./store/store.js";
import { HolderSpans } from "./tracing/session-tracer.js";
import { tracedStore } from "./tracing/traced-store.js";
import type { Tracing } from "./tracing/tracing.js";

/** Settings of one coordinator process. */
export interface CoordinatorOptions {
  store: Store;
  log: Logger;
  /** host:port to listen on; port 0 picks a free one. */
  listen: string;
  limits?: Partial<Limits>;
  /** How long shutdown waits for streams to end before cutting them (default 5000 ms). */
  shutdownGraceMs?: number;
  /** Where to record metrics (default: nowhere). */
  metrics?: Metrics;
  /** Where to send trace spans (default: NO_TRACING, nothing recorded). */
  tracing?: Tracing;
  /** TLS and access control (default: plaintext, open to every caller); closed by `stop`. */
  security?: Security;
  /** Lock-delay in ms of acquires that set none, by lock-name prefix (default: none). */
  lockDelays?: Readonly<Record<string, number>>;
  /** Signs a fencing proof into every grant (`serve --fencing-key`; docs/fencing.md); default: no proofs. */
  fencing?: FencingSigner;
}

/**
 * A coordinator: the gRPC server, its lock table and its store. `start` resolves once it listens
 * (with the bound port); `stop` drains: it ends every session stream with UNAVAILABLE without
 * touching the store, so clients resume elsewhere with their locks, then closes the server,
 * force-closing after the grace period.
 */
export class Coordinator {
  readonly table: LockTable;
  /** Session streams that have not sent Open yet (bounded, with a deadline). */
  readonly intake: OpenIntake;
  readonly watches: WatchHub;
  readonly limits: Limits;
  /** The store every operation goes through (instrumented when metrics are on); the web console reads it too. */
  readonly store: Store;
  /** Describe, List and Revoke, shared by the gRPC API and the web console. */
  readonly admin: LockAdmin;
  readonly validator: RequestValidator;
  private readonly server: Server;
  private readonly sessions = new Map<string, SessionStream>();
  private readonly health: StoreHealthService;
  /** TLS and access control: the gRPC port's credentials and the authorizer the web console shares. */
  readonly security: Security;
  port = 0;

  constructor(private readonly options: CoordinatorOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    const { metrics } = options;
    const tracing = options.tracing?.enabled ? options.tracing : undefined;
    // Traced innermost, so a store span names the real store class, not the metrics wrapper.
    const traced = tracing ? tracedStore(options.store, tracing) : options.store;
    this.store = metrics ? new InstrumentedStore(traced, metrics) : traced;
    const lockDelays = new LockDelayDefaults(options.lockDelays);
    this.table = new LockTable(this.store, this.limits, options.log, metrics, lockDelays);
    this.intake = new OpenIntake(this.limits);
    this.watches = new WatchHub(this.store, options.log);
    metrics?.track({
      sessions: () => this.sessions.size,
      locksHeld: () => [...this.sessions.values()].reduce((n, s) => n + s.heldCount, 0),
      waiters: () => this.table.waiterCount,
      storeHealthy: () => this.store.healthy(),
      queuedWaiters: () => this.table.queuedWaits(),
    });
    this.server = new Server({
      // Room for a resume's open, which lists every hold; any other message past maxMessageBytes is
      // refused by the strict reader alone (its request fails, its session goes on).
      "grpc.max_receive_message_length": Math.max(this.limits.maxMessageBytes, largestOpenBytes(this.limits)),
      // A client opening streams by the thousand waits for slots on its own connection.
      "grpc.max_concurrent_streams": this.limits.maxStreamsPerConnection,
      "grpc.keepalive_time_ms": 5_000,
      "grpc.keepalive_timeout_ms": 2_500,
      "grpc.keepalive_permit_without_calls": 1,
      "grpc.http2.min_ping_interval_without_data_ms": 4_000,
      // Channelz counts and timestamps every message for an admin service nobody serves here.
      "grpc.enable_channelz": 0,
      interceptors: [rejectMalformedRequests],
    });
    const validator = new RequestValidator(this.limits);
    this.security = options.security ?? Security.open();
    const guard = this.security.authorizer;
    this.validator = validator;
    this.admin = new LockAdmin(this.store, validator, options.log, guard, metrics);
    const deps = {
      table: this.table,
      holds: new HoldChanges(this.store, (hold, reason) => this.table.ledger.lost(hold, reason)),
      handOvers: new HandOvers(this.store, this.table.resolver, this.table.ledger),
      keeper: new SessionKeeper(this.store, this.table, options.log, metrics),
      validator,
      limits: this.limits,
      log: options.log,
      sessions: this.sessions,
      slots: new SessionSlots(this.limits.maxSessions),
      traces: tracing && { tracing, holders: new HolderSpans() },
      admission: new StoreAdmission(this.limits),
      intake: this.intake,
      watches: this.watches,
      guard,
      admin: this.admin,
      fencing: options.fencing,
    };
    // Requests are read strictly: a malformed one is answered INVALID_ARGUMENT, not INTERNAL.
    this.server.addService(strictService(LockServiceService, this.limits.maxMessageBytes), lockService(deps));
    this.health = new StoreHealthService(this.store, options.log);
    this.health.addToServer(this.server);
    addReflection(this.server);
  }

  async start(): Promise<number> {
    // Grants come back through the engine's StoreEvents; a revocation or a release request reaches the
    // stream that has the session.
    await this.store.start(
      new StoreEvents(
        this.table,
        this.watches,
        (r) => this.sessions.get(r.sessionId)?.revoked(r),
        (r) => this.sessions.get(r.sessionId)?.releaseRequested(r),
      ),
    );
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(this.options.listen, this.security.credentials, (err, port) =>
        err ? reject(err) : resolve(port),
      ),
    );
    logTransportMismatches(this.server, this.options.log);
    this.options.log.info(
      {
        listen: this.options.listen,
        port: this.port,
        coordinator: this.store.coordinatorId,
        tls: this.security.credentials._isSecure(),
      },
      "listening",
    );
    return this.port;
  }

  async stop(): Promise<void> {
    this.health.shutdown();
    // Drain: sessions leave with their locks and queue places intact, to resume elsewhere.
    for (const s of [...this.sessions.values()])
      s.detach(status.UNAVAILABLE, "coordinator draining: resume on another coordinator");
    this.watches.stop();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, this.options.shutdownGraceMs ?? 5000);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.table.stop();
    this.security.close();
    await this.store.close();
  }
}
