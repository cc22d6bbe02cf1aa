import { randomBytes } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import { HealthSignal } from "../health-signal.js";
import type {
  AcquireArgs,
  AcquireOutcome,
  CheckOutcome,
  Claim,
  LockPage,
  LockState,
  ReleaseOutcome,
  ReleaseRequest,
  RevokeOutcome,
  SessionRecord,
  Store,
  StoreListener,
  TransferArgs,
  TransferOutcome,
} from "../store.js";
import { storeMark } from "../store-marks.js";
import { redisCall } from "./connection/redis-call.js";
import type { RedisClient } from "./connection/redis-connection.js";
import { StoreConnections } from "./connection/store-connections.js";
import { JournalReplay } from "./journal/journal-replay.js";
import type { HoldClaim } from "./journal/release-journal.js";
import { ClusterLockLister } from "./records/cluster-lock-lister.js";
import { EventFeed } from "./records/event-feed.js";
import { LockKeyCache } from "./records/lock-key-cache.js";
import { grantChannel } from "./records/lock-keys.js";
import { LockLister } from "./records/lock-lister.js";
import { RedisWaitRegistry } from "./records/redis-wait-registry.js";
import type { RedisStoreOptions } from "./redis-store-options.js";
import { sendAcquire, translateAcquire } from "./scripts/acquire.js";
import { runAcquireSet } from "./scripts/acquire-set.js";
import { checkGrants, sendCheck, translateCheck } from "./scripts/check.js";
import { runDescribe } from "./scripts/describe.js";
import { runProclaim } from "./scripts/proclaim.js";
import { type LetGo, releaseGrants, sendRelease, translateRelease } from "./scripts/release.js";
import { type RenewScriptDeps, runRenew } from "./scripts/renew.js";
import { runRequestRelease } from "./scripts/request-release.js";
import { revokeGrants, sendRevoke, translateRevoke } from "./scripts/revoke.js";
import { LockScripts, type ScriptArg, type ScriptName } from "./scripts/runner/lock-scripts.js";
import type { ScriptContext } from "./scripts/script-context.js";
import { sendTransfer, transferGrants, translateTransfer } from "./scripts/transfer.js";
import { SessionRecords } from "./session-records.js";
import { AckedWriter } from "./writes/acked-writer.js";
import { ClusterWriter } from "./writes/cluster-writer.js";
import { GrantOutbox } from "./writes/grant-outbox.js";
import { SingleWriter, type StoreWriter } from "./writes/store-writer.js";

export type { RedisStoreOptions } from "./redis-store-options.js";

const DAY_MS = 86_400_000;

/**
 * The Store on Redis: one Lua script per operation, and one pub/sub channel per coordinator on
 * which other coordinators publish grants for its waiters. Commands fail fast with
 * StoreUnavailableError while Redis is unreachable; after the event connection comes back the
 * listener is asked to resync, because grants published meanwhile were lost. With replica acks,
 * every state change is confirmed by WAIT before its reply (or a grant it made) is passed on, and
 * scripts get the master's epoch as the floor of their tokens and versions (docs/data-model.md).
 */
export class RedisStore implements Store {
  readonly coordinatorId = randomBytes(8).toString("hex");
  private readonly prefix: string;
  private readonly redis: RedisClient;
  private readonly events: RedisClient;
  private readonly scripts: LockScripts;
  private readonly connections: StoreConnections;
  private readonly health = new HealthSignal(false);
  private readonly feed: EventFeed;
  private readonly lister: LockLister | ClusterLockLister;
  private readonly outbox: GrantOutbox;
  private readonly writer: StoreWriter;
  private readonly sessions: SessionRecords;
  private readonly lockKeys: LockKeyCache;
  /** What every script shares: each operation's ARGV, run and reply translation sit beside its .lua. */
  private readonly context: ScriptContext;
  /** What runRenew needs, made at the first renewal; it keeps the renew.lua bodies of idle sessions' locks. */
  private renewing?: RenewScriptDeps;
  readonly waits: RedisWaitRegistry;
  /** With Sentinels only: the acknowledged let-gos, replayed on each new master (docs/operations.md). */
  private readonly replay?: JournalReplay;

  constructor(options: RedisStoreOptions) {
    this.connections = new StoreConnections(options, () => this.updateHealth());
    ({ redis: this.redis, events: this.events } = this.connections);
    const target = options.target ?? { kind: "url" as const, url: options.url ?? "" };
    this.prefix = options.prefix ?? "turnstile";
    this.lockKeys = new LockKeyCache(this.prefix);
    const auth = options.auth ?? {};
    this.scripts = new LockScripts(this.redis);
    const hooks = {
      onChange: () => this.updateHealth(),
      recovered: () => this.listener?.resync(),
      acknowledged: (socket: unknown) => this.outbox.acknowledged(socket),
      masterLearned: (epoch: number) => this.replay?.masterLearned(epoch),
      suspended: () => this.outbox.dropHeld(),
    };
    // On Cluster each write goes to its slot's master, confirmed there; elsewhere there is one connection.
    this.writer =
      this.redis instanceof Cluster
        ? new ClusterWriter(this.redis, this.scripts, { ...options, prefix: this.prefix }, hooks)
        : new SingleWriter(new AckedWriter(this.redis, { ...options, target, auth, prefix: this.prefix }, hooks), {
            redis: this.redis,
            scripts: this.scripts,
          });
    const fenceRetainMs = options.fenceRetainMs ?? 30 * DAY_MS;
    const publish = target.kind === "cluster" ? "always" : "watched";
    const [coordinatorId, prefix, lockKeys, writer, run] = [
      this.coordinatorId,
      this.prefix,
      this.lockKeys,
      this.writer,
      this.run.bind(this),
    ];
    this.context = { coordinatorId, prefix, fenceRetainMs, publish, lockKeys, writer, run };
    this.sessions = new SessionRecords(this.redis, this.prefix, this.writer);
    this.waits = new RedisWaitRegistry(this.redis, this.prefix);
    const retrySet = (waiter: Omit<Claim, "owner">) => this.listener?.setMayFit?.(waiter);
    this.outbox = new GrantOutbox(this.redis, this.prefix, (grant) => this.listener?.grant(grant), retrySet);
    this.feed = new EventFeed(this.events, this.prefix, options.commandTimeoutMs ?? 2000);
    // SCAN walks one node; on Cluster, List reads every master slot by slot (docs/operations.md).
    this.lister =
      this.redis instanceof Redis
        ? new LockLister(this.redis, this.prefix)
        : new ClusterLockLister(this.redis, this.prefix);
    if (target.kind !== "sentinel") return;
    this.replay = new JournalReplay(options, { context: this.context, deliver: this.outbox.deliver.bind(this.outbox) });
  }

  async start(listener: StoreListener): Promise<void> {
    this.listener = listener;
    const channel = grantChannel(this.prefix, this.coordinatorId);
    this.feed.attach(listener);
    this.events.on("message", (from: string, message: string) => {
      if (from === channel) this.outbox.received(message);
    });
    let ready = false;
    this.events.on("ready", () => {
      // Re-check only once commands can run too, or the re-checks would fail and wait for a retry.
      if (ready && this.redis.status === "ready") listener.resync();
      else if (ready) this.redis.once("ready", () => listener.resync());
      ready = true;
    });
    await this.connections.connect();
    await this.writer.start();
    // ioredis re-subscribes by itself after reconnecting; "ready" then triggers the resync.
    await this.events.subscribe(channel);
    await this.feed.start();
  }

  async acquire(args: AcquireArgs): Promise<AcquireOutcome> {
    const answered = storeMark("acquire", args);
    const reply = await sendAcquire(this.context, args);
    answered?.();
    return translateAcquire(reply as unknown[]);
  }

  acquireSet: Store["acquireSet"] = (args) => runAcquireSet(this.context, args, this.redis instanceof Cluster);

  release(claim: HoldClaim, all: boolean): Promise<ReleaseOutcome> {
    return this.letGo({ ...claim, requestId: "" }, all ? "all" : "one");
  }

  withdraw(claim: Claim, how: "cancel" | "abandon"): Promise<ReleaseOutcome> {
    return this.letGo(claim, how);
  }

  async check(name: string, waiters: Claim[]): Promise<CheckOutcome> {
    const reply = (await sendCheck(this.context, name, waiters)) as unknown[];
    this.outbox.deliver(name, checkGrants(reply));
    return translateCheck(reply);
  }

  renew: Store["renew"] = (args) => {
    this.renewing ??= {
      lockKeys: this.lockKeys,
      fenceRetainMs: this.context.fenceRetainMs,
      cluster: this.redis instanceof Cluster,
      sessions: this.sessions,
      // Bodies run on one Redis only (run-renew.ts), where no key routes the write.
      bodies: { kept: new WeakMap(), run: (b) => this.writer.write("", (on) => on.scripts.runBody("renew", b)) },
    };
    return runRenew(args, this.renewing, (k, a) => this.run("renew", k, a));
  };

  saveSession(record: SessionRecord): Promise<void> {
    return this.sessions.save(record);
  }

  loadSession(sessionId: string): Promise<SessionRecord | undefined> {
    return this.sessions.load(sessionId);
  }

  touchSession(sessionId: string, ttlMs: number): Promise<boolean> {
    return this.sessions.touch(sessionId, ttlMs);
  }

  deleteSession(sessionId: string): Promise<void> {
    return this.sessions.delete(sessionId);
  }

  /**
   * True while both connections are ready and, with replica acks, writes can be acknowledged: the
   * master's epoch is known and the last WAIT reached its replicas.
   */
  healthy(): boolean {
    return this.health.healthy;
  }

  onHealthChange(listener: (healthy: boolean) => void): () => void {
    return this.health.subscribe(listener);
  }

  describe(name: string): Promise<LockState> {
    return runDescribe(this.context, name);
  }

  list(prefix: string, pageSize: number, pageToken: string): Promise<LockPage | "invalid-token"> {
    return redisCall(() => this.lister.list(prefix, pageSize, pageToken));
  }

  async revoke(hold: Omit<Claim, "requestId">): Promise<RevokeOutcome> {
    const reply = (await sendRevoke(this.context, hold)) as unknown[];
    const outcome = translateRevoke(reply);
    // Told first: a holder served here learns now, before a waiter here is granted (its broadcast is then a no-op).
    if (outcome.kind === "revoked") this.listener?.revoked({ ...hold, token: outcome.token });
    this.outbox.deliver(hold.name, revokeGrants(reply));
    return outcome;
  }

  proclaim(hold: Omit<Claim, "requestId">, value: Uint8Array): Promise<"proclaimed" | "not-held"> {
    return runProclaim(this.context, hold, value);
  }

  async transfer(args: TransferArgs): Promise<TransferOutcome> {
    const reply = (await sendTransfer(this.context, args)) as unknown[];
    this.outbox.deliver(args.name, transferGrants(reply));
    return translateTransfer(reply);
  }

  requestRelease(request: ReleaseRequest): Promise<number> {
    return runRequestRelease(this.context, request);
  }

  watch(name: string): Promise<void> {
    return redisCall(() => this.feed.watch(name));
  }

  unwatch(name: string): Promise<void> {
    return redisCall(() => this.feed.unwatch(name));
  }

  async close(): Promise<void> {
    this.writer.close();
    this.connections.close();
    this.health.set(false);
  }

  private listener?: StoreListener;

  private async letGo(claim: Claim & HoldClaim, how: LetGo): Promise<ReleaseOutcome> {
    const freedAtMs = performance.now();
    const answered = storeMark("release", claim);
    const reply = (await sendRelease(this.context, claim, how)) as unknown[];
    answered?.();
    this.outbox.deliver(claim.name, releaseGrants(reply), freedAtMs);
    const outcome = translateRelease(reply);
    this.replay?.journal.letGo(claim, how, outcome);
    return outcome;
  }

  /** Runs a script, acknowledged; an unacknowledged reply's grants to the lock `lock` are held back. */
  private run(
    name: ScriptName,
    keys: readonly string[],
    args: ScriptArg[],
    lock?: string,
    grants?: (r: unknown[]) => unknown,
  ) {
    // Only a confirming writer ever holds a reply back; without acks no closure is needed per call.
    const held =
      lock && grants && this.writer.confirming
        ? (reply: unknown, socket: unknown) => this.outbox.hold(socket, lock, grants(reply as unknown[]) as string[])
        : undefined;
    return this.writer.write(keys[0], (on) => on.scripts.run(name, keys, args), held);
  }

  private updateHealth(): void {
    this.health.set(this.connections.ready && this.writer.ready);
  }
}
