import { Redis } from "ioredis";
import { REDIS_FLUSH } from "../../../store-marks.js";
import type { RedisClient } from "../../connection/redis-connection.js";
import { LuaScript, type ScriptArg, type ScriptBody, ScriptCommand } from "./script-command.js";
import { scriptSource } from "./script-source.js";

export type { ScriptArg } from "./script-command.js";

/**
 * The operations, one Lua file each in scripts/ (includes expanded: script-source.ts), with the
 * number of KEYS each takes (acquire-set: per name) — its header names them; test/store/scripts/script-source.test.ts checks both agree.
 */
export const SCRIPTS = {
  acquire: { numberOfKeys: 6 }, // holders, data, queue, leases, fence, version
  "acquire-set": { numberOfKeys: 6 }, // per name of the set: holders, data, queue, leases, fence, version
  release: { numberOfKeys: 6 }, // holders, data, queue, leases, fence, version
  check: { numberOfKeys: 6 }, // holders, data, queue, leases, fence, version
  renew: { numberOfKeys: 4 }, // holders, leases, fence, data
  revoke: { numberOfKeys: 6 }, // holders, data, queue, leases, fence, version
  proclaim: { numberOfKeys: 3 }, // holders, data, version
  describe: { numberOfKeys: 5 }, // holders, data, queue, leases, version
  "release-token": { numberOfKeys: 6 }, // holders, data, queue, leases, fence, version
  transfer: { numberOfKeys: 6 }, // holders, data, queue, leases, fence, version
  "request-release": { numberOfKeys: 2 }, // holders, data
} as const;

/** One of the scripts. */
export type ScriptName = keyof typeof SCRIPTS;

/**
 * Bump whenever the text Redis runs changes (Redis knows each text by its SHA1, so coordinators of two
 * versions never run each other's); docs/data-model.md says whether a change matters to a rolling upgrade.
 */
export const SCRIPTS_VERSION = 17;

/**
 * Scripts whose ARGV opens with the session id (their contract headers): the order of one session's
 * scripts is kept when a let-go goes first (LockScripts below).
 */
const SESSION_FIRST: ReadonlySet<ScriptName> = new Set([
  "acquire",
  "acquire-set",
  "release",
  "renew",
  "proclaim",
  "revoke",
]);

/**
 * A script handed over, not written yet: the session it belongs to ('' none known) and the lock it is on
 * (its first key, the lock's holders key; '' none known).
 */
interface Handed {
  command: ScriptCommand;
  session: string;
  lock: string;
}

/**
 * Scripts held back until the releases written ahead of them are answered (LockScripts): they would
 * run right behind those releases in Redis, on one of the same locks or for one of the same sessions.
 */
interface HeldBack {
  entries: Handed[];
  sessions: Set<string>;
  locks: Set<string>;
  /** Releases written ahead of the entries and not answered yet. */
  unanswered: number;
}

/** The LockScripts of each connection, for `writeHandedOver` (a WAIT must follow the scripts it covers). */
const byConnection = new WeakMap<object, LockScripts>();

/**
 * Writes the scripts handed over on `redis` in this turn now (they are written at the end of the turn
 * otherwise): a command sent on `redis` after this goes out after them. ReplicaAcks calls it before its
 * WAIT, which covers only what its connection sent before it.
 */
export function writeHandedOver(redis: object): void {
  byConnection.get(redis)?.writeAll();
}

// The script texts do not change while the process runs: every LockScripts shares one set (and the
// connections each script was already sent on).
let loaded: Record<ScriptName, LuaScript> | undefined;

function luaScripts(): Record<ScriptName, LuaScript> {
  loaded ??= Object.fromEntries(
    (Object.keys(SCRIPTS) as ScriptName[]).map((name) => [
      name,
      new LuaScript(scriptSource(name), SCRIPTS[name].numberOfKeys),
    ]),
  ) as Record<ScriptName, LuaScript>;
  return loaded;
}

/**
 * Runs the scripts on one client (a Redis connection or a Cluster): EVALSHA, with the whole text
 * the first time on a connection and after NOSCRIPT (ScriptCommand). Rejects with the Redis error
 * as ioredis reports it.
 *
 * On one connection (not a Cluster) the scripts handed over in one turn of the event loop are written
 * together at its end, releases first: a release.lua goes ahead of every script handed over before it
 * in that turn except those of its own session (and earlier releases), and the releases in front go
 * out in a socket write of their own. A script behind them on one of their locks is held back until
 * they are answered (writeHandedOver). So when a batch of session messages holds releases and acquires,
 * Redis runs the releases, and answers their grants, first. Scripts of different sessions in flight
 * together were never ordered (neither was answered); one session's keep the order it sent them in.
 */
export class LockScripts {
  /** Scripts handed over in this turn, in the order they will be written; undefined: none (nothing corked). */
  private handed?: Handed[];
  /** How many of `handed`, from the front, are releases (a release goes after the last of them at least). */
  private releases = 0;
  /** The socket corked for `handed` (the connection's socket may be another one by the time they are written). */
  private corkedSocket?: { cork(): void; uncork(): void };
  private readonly scripts = luaScripts();
  /** Scripts held back behind releases in Redis (see the class); undefined: none. */
  private held?: HeldBack;

  /**
   * `holdBack: false` writes every script at the end of its turn (a Cluster master's connection: see
   * docs/architecture.md, Releases first).
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly options: { holdBack: boolean } = { holdBack: true },
  ) {
    byConnection.set(redis, this);
  }

  /** Runs one script with its keys and arguments and returns its raw reply (bulk strings as text). */
  run(name: ScriptName, keys: readonly string[], args: ScriptArg[]): Promise<unknown> {
    return this.call(name, keys, args, "utf8");
  }

  /** Like `run`, with bulk strings in the reply as Buffers (for binary holder values). */
  runBuffer(name: ScriptName, keys: readonly string[], args: ScriptArg[]): Promise<unknown> {
    return this.call(name, keys, args, null);
  }

  /** Like `run`, with keys and arguments already in RESP (a ScriptBody, built once for many calls). */
  runBody(name: ScriptName, body: ScriptBody): Promise<unknown> {
    const script = this.scripts[name];
    return this.send(() => ScriptCommand.withBody(script, body, "utf8"));
  }

  private call(name: ScriptName, keys: readonly string[], args: ScriptArg[], encoding: "utf8" | null) {
    const script = this.scripts[name];
    const session = SESSION_FIRST.has(name) && typeof args[0] === "string" ? args[0] : "";
    return this.send(() => new ScriptCommand(script, keys, args, encoding), name === "release", session, keys[0]);
  }

  private send(command: () => ScriptCommand, release = false, session = "", lock = ""): Promise<unknown> {
    const first = command();
    // ioredis's sendCommand returns the command's own promise: writing it later costs no promise more.
    if (!this.handOver({ command: first, session, lock }, release)) this.redis.sendCommand(first);
    return (first.promise as Promise<unknown>).then(undefined, (err: Error) => {
      // The script was not there (a flushed cache): the same command again, which now sends the text.
      if (!err.message.includes("NOSCRIPT")) throw err;
      first.forgetLoaded();
      return this.redis.sendCommand(command());
    });
  }

  /**
   * Keeps `command` to be written at the end of this turn (releases first, see the class), so the
   * scripts started by one batch of session messages go out in one write instead of one system call
   * each; false on a Cluster, which writes it at once.
   */
  private handOver(entry: Handed, release: boolean): boolean {
    const socket = this.redis instanceof Redis ? this.redis.stream : undefined;
    if (!socket) return false;
    const held = this.held;
    if (held && (held.sessions.has(entry.session) || held.locks.has(entry.lock))) {
      LockScripts.holdBack(held, entry);
      return true;
    }
    let handed = this.handed;
    if (!handed) {
      handed = this.handed = [];
      this.corkedSocket = socket;
      socket.cork();
      // setImmediate, not nextTick: grpc-js hands over each message in a tick of its own, and the
      // check phase comes only after every message read in this turn of the event loop.
      setImmediate(() => {
        this.writeHandedOver();
        socket.uncork();
        if (REDIS_FLUSH.hasSubscribers) REDIS_FLUSH.publish({});
      });
    }
    const session = entry.session;
    if (!release || handed.length === this.releases) {
      handed.push(entry);
      if (release) this.releases++;
      return true;
    }
    // Behind the releases already in front, and behind every script of its own session.
    let at = this.releases;
    if (session !== "") for (let i = handed.length - 1; i >= at; i--) if (handed[i].session === session) at = i + 1;
    handed.splice(at, 0, entry);
    if (at === this.releases) this.releases++;
    return true;
  }

  /**
   * Writes the scripts handed over in this turn into the corked socket (they go out when it is
   * uncorked). Releases with other scripts behind them go out in a socket write of their own first, so
   * Redis can read, run and answer them before it has read the rest: their grants come back alone.
   * Scripts behind them on one of their locks, or of a session already held back, are held back until
   * the releases are answered: written at once, Redis would read them with the releases and run them
   * before it answers any (it writes replies only once it has run what it read), so a hand-off's grant
   * would wait for the next acquire of the same lock, which only queues.
   */
  writeHandedOver(): void {
    const handed = this.handed;
    if (!handed) return;
    const releases = this.releases;
    this.handed = undefined;
    this.releases = 0;
    const corked = this.corkedSocket;
    this.corkedSocket = undefined;
    // Split only on the socket corked for them (a reconnect in between writes them to a new one at once).
    const split = releases > 0 && releases < handed.length && this.redis instanceof Redis;
    const socket = split && corked === (this.redis as Redis).stream ? corked : undefined;
    let held: HeldBack | undefined;
    for (let i = 0; i < handed.length; i++) {
      const entry = handed[i];
      if (i === releases && socket) {
        socket.uncork();
        if (REDIS_FLUSH.hasSubscribers) REDIS_FLUSH.publish({});
        socket.cork();
      }
      if (socket && i >= releases && this.options.holdBack && this.holdsBack(handed, releases, entry)) {
        held = this.held ??= { entries: [], sessions: new Set(), locks: new Set(), unanswered: 0 };
        LockScripts.holdBack(held, entry);
        continue;
      }
      this.redis.sendCommand(entry.command);
    }
    if (!held) return;
    held.unanswered += releases;
    const answered = () => {
      if (--held.unanswered === 0 && this.held === held) this.writeHeldBack();
    };
    for (let i = 0; i < releases; i++) handed[i].command.promise.then(answered, answered);
  }

  /**
   * Writes every script, held back or handed over in this turn, now: a command sent on the connection
   * after this goes out after them (writeHandedOver(redis), before a WAIT).
   */
  writeAll(): void {
    this.writeHeldBack();
    this.writeHandedOver();
  }

  /** Whether `entry`, behind the first `releases` of `handed`, is held back (see writeHandedOver). */
  private holdsBack(handed: Handed[], releases: number, entry: Handed): boolean {
    if (this.held?.sessions.has(entry.session) || this.held?.locks.has(entry.lock)) return true;
    if (entry.lock === "") return false;
    for (let i = 0; i < releases; i++) if (handed[i].lock === entry.lock) return true;
    return false;
  }

  /** Adds `entry` to `held`, and its session and lock to those whose later scripts wait behind it. */
  private static holdBack(held: HeldBack, entry: Handed): void {
    held.entries.push(entry);
    if (entry.session !== "") held.sessions.add(entry.session);
    if (entry.lock !== "") held.locks.add(entry.lock);
  }

  /** Writes the scripts held back, in the order they were handed over (in one socket write). */
  private writeHeldBack(): void {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    const socket = this.redis instanceof Redis ? this.redis.stream : undefined;
    socket?.cork();
    for (const entry of held.entries) this.redis.sendCommand(entry.command);
    socket?.uncork();
    if (REDIS_FLUSH.hasSubscribers) REDIS_FLUSH.publish({});
  }
}
