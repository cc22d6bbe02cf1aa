import { randomBytes } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import { storeMark } from "../../tracing/wire-marks.js";
import { HealthSignal } from "../health-signal.js";
import type {
  AcquireArgs,
  AcquireOutcome,
  CheckOutcome,
  Claim,
  LockPage,
  LockState,
  ReleaseOutcome,
  RevokeOutcome,
  SessionRecord,
  Store,
  StoreListener,
} from "../store.js";
import { redisCall } from "./connection/redis-call.js";
import { StoreConnections } from "./connection/store-connections.js";
import { JournalReplay } from "./journal/journal-replay.js";
import type { HoldClaim } from "./journal/release-journal.js";
import { EventFeed } from "./records/event-feed.js";
import { LockKeyCache } from "./records/lock-key-cache.js";
import { grantChannel } from "./records/lock-keys.js";
import { LockLister } from "./records/lock-lister.js";
import { parseLockState } from "./records/lock-state-parser.js";
import { RedisWaitRegistry } from "./records/redis-wait-registry.js";
import { SessionRecords } from "./records/session-records.js";
import type { RedisStoreOptions } from "./redis-store-options.js";
import { LockScriptArgs } from "./scripts/lock-script-args.js";
import { LockScripts, type ScriptArg, type ScriptName } from "./scripts/lock-scripts.js";
import { AckedWriter } from "./writes/acked-writer.js";
import { ClusterWriter } from "./writes/cluster-writer.js";
import { GrantOutbox } from "./writes/grant-outbox.js";
import { SingleWriter, type StoreWriter } from "./writes/store-writer.js";

export type { RedisStoreOptions } from "./redis-store-options.js";

import type { RedisClient } from "./connection/redis-connection.js";
import { runAcquireSet } from "./run-acquire-set.js";
import { type RenewScriptDeps, runRenew } from "./run-renew.js";
import {
  type ScriptReply,
  translateCheck,
  translateProclaim,
  translateReply,
  translateRevoke,
} from "./scripts/script-code.js";

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
  private readonly lister?: LockLister;
  private readonly outbox: GrantOutbox;
  private readonly writer: StoreWriter;
  private readonly sessions: SessionRecords;
  private readonly lockKeys: LockKeyCache;
  private readonly argv: LockScriptArgs;
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
    this.argv = new LockScriptArgs(this.coordinatorId, this.prefix, fenceRetainMs, publish, this.lockKeys, this.writer);
    this.sessions = new SessionRecords(this.redis, this.prefix, this.writer);
    this.waits = new RedisWaitRegistry(this.redis, this.prefix);
    const retrySet = (waiter: Omit<Claim, "owner">) => this.listener?.setMayFit?.(waiter);
    this.outbox = new GrantOutbox(this.redis, this.prefix, (grant) => this.listener?.grant(grant), retrySet);
    this.feed = new EventFeed(this.events, this.prefix, options.commandTimeoutMs ?? 2000);
    // SCAN walks one node; on Cluster, List answers that it is not supported (docs/operations.md).
    this.lister = this.redis instanceof Redis ? new LockLister(this.redis, this.prefix) : undefined;
    if (target.kind !== "sentinel") return;
    const [argv, lockKeys, deliver] = [this.argv, this.lockKeys, this.outbox.deliver.bind(this.outbox)];
    this.replay = new JournalReplay(options, { argv, lockKeys, send: this.run.bind(this), deliver });
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
    const lock = this.lockKeys.of(args.name);
    const answered = storeMark("acquire", args);
    const reply = await this.run("acquire", lock.keys, this.argv.acquire(args, lock));
    answered?.();
    return translateReply(reply as ScriptReply) as AcquireOutcome;
  }

  acquireSet: Store["acquireSet"] = (args) =>
    runAcquireSet(args, { lockKeys: this.lockKeys, argv: this.argv, cluster: this.redis instanceof Cluster }, (k, a) =>
      this.run("acquire-set", k, a),
    );

  release(claim: HoldClaim, all: boolean): Promise<ReleaseOutcome> {
    return this.letGo({ ...claim, requestId: "" }, all ? "all" : "one");
  }

  withdraw(claim: Claim, how: "cancel" | "abandon"): Promise<ReleaseOutcome> {
    return this.letGo(claim, how);
  }

  async check(name: string, waiters: Claim[]): Promise<CheckOutcome> {
    const args = this.argv.check(name, waiters);
    const reply = (await this.run("check", this.lockKeys.of(name).keys, args, name, (r) => r[1])) as [
      number,
      string[],
      string[],
    ];
    this.outbox.deliver(name, reply[1]);
    return translateCheck(reply);
  }

  renew: Store["renew"] = (args) => {
    this.renewing ??= {
      lockKeys: this.lockKeys,
      argv: this.argv,
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

  async describe(name: string): Promise<LockState> {
    const [holders, data, queue, leases, , version] = this.lockKeys.of(name).keys;
    const keys = [holders, data, queue, leases, version];
    // With acks, after a WAIT covers the writes before it: a release retry trusts a "gone" read here.
    return parseLockState(name, await this.writer.write(holders, (on) => on.scripts.runBuffer("describe", keys, [])));
  }

  list(prefix: string, pageSize: number, pageToken: string): Promise<LockPage | "invalid-token" | "unsupported"> {
    const lister = this.lister;
    if (!lister) return Promise.resolve("unsupported");
    return redisCall(() => lister.list(prefix, pageSize, pageToken));
  }

  async revoke(hold: Omit<Claim, "requestId">): Promise<RevokeOutcome> {
    const args = this.argv.revoke(hold);
    const reply = (await this.run(
      "revoke",
      this.lockKeys.of(hold.name).keys,
      args,
      hold.name,
      (r) => r[3],
    )) as ScriptReply;
    const outcome = translateRevoke(reply);
    // Told first: a holder served here learns now, before a waiter here is granted (its broadcast is then a no-op).
    if (outcome.kind === "revoked") this.listener?.revoked({ ...hold, token: outcome.token });
    this.outbox.deliver(hold.name, reply[3] as string[]);
    return outcome;
  }

  async proclaim(hold: Omit<Claim, "requestId">, value: Uint8Array): Promise<"proclaimed" | "not-held"> {
    const lock = this.lockKeys.of(hold.name);
    const [holders, data, , , , version] = lock.keys;
    const args = this.argv.proclaim(hold, value, lock);
    return translateProclaim((await this.run("proclaim", [holders, data, version], args)) as ScriptReply);
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

  private async letGo(claim: Claim & HoldClaim, how: "one" | "all" | "cancel" | "abandon"): Promise<ReleaseOutcome> {
    const freedAtMs = performance.now();
    const answered = storeMark("release", claim);
    const reply = (await this.run(
      "release",
      this.lockKeys.of(claim.name).keys,
      this.argv.release(claim, how),
      claim.name,
      (r) => r[2],
    )) as [number, number, string[]];
    answered?.();
    this.outbox.deliver(claim.name, reply[2], freedAtMs);
    const outcome = translateReply(reply) as ReleaseOutcome;
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
