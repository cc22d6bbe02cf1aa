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

/** A script handed over, not written yet, and the session it belongs to ('' none known). */
interface Handed {
  command: ScriptCommand;
  session: string;
}

/** The LockScripts of each connection, for `writeHandedOver` (a WAIT must follow the scripts it covers). */
const byConnection = new WeakMap<object, LockScripts>();

/**
 * Writes the scripts handed over on `redis` in this tick now (they are written at the end of the tick
 * otherwise): a command sent on `redis` after this goes out after them. ReplicaAcks calls it before its
 * WAIT, which covers only what its connection sent before it.
 */
export function writeHandedOver(redis: object): void {
  byConnection.get(redis)?.writeHandedOver();
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
 * On one connection (not a Cluster) the scripts handed over in one tick (process.nextTick's queue: one
 * session message's work, or a session close's releases) are written together at its end, in one socket
 * write, releases first: a release.lua goes ahead of every script handed over before it in that tick
 * except those of its own session (and earlier releases). So when a tick's work holds releases and
 * acquires, Redis runs the releases first and their replies, with their grants, come back first.
 * Scripts of different sessions in flight together were never ordered (neither was answered); one
 * session's keep the order it sent them in.
 */
export class LockScripts {
  /** Scripts handed over in this tick, in the order they will be written; undefined: none (nothing corked). */
  private handed?: Handed[];
  /** How many of `handed`, from the front, are releases (a release goes after the last of them at least). */
  private releases = 0;
  private readonly scripts = luaScripts();

  constructor(private readonly redis: RedisClient) {
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
    return this.send(() => new ScriptCommand(script, keys, args, encoding), name === "release", session);
  }

  private send(command: () => ScriptCommand, release = false, session = ""): Promise<unknown> {
    const first = command();
    // ioredis's sendCommand returns the command's own promise: writing it later costs no promise more.
    if (!this.handOver({ command: first, session }, release)) this.redis.sendCommand(first);
    return (first.promise as Promise<unknown>).then(undefined, (err: Error) => {
      // The script was not there (a flushed cache): the same command again, which now sends the text.
      if (!err.message.includes("NOSCRIPT")) throw err;
      first.forgetLoaded();
      return this.redis.sendCommand(command());
    });
  }

  /**
   * Keeps `command` to be written at the end of this tick (releases first, see the class), so the
   * scripts one piece of work starts go out in one write instead of one system call each; false on a
   * Cluster, which writes it at once.
   */
  private handOver(entry: Handed, release: boolean): boolean {
    const socket = this.redis instanceof Redis ? this.redis.stream : undefined;
    if (!socket) return false;
    let handed = this.handed;
    if (!handed) {
      handed = this.handed = [];
      socket.cork();
      // nextTick, not setImmediate: grpc-js hands over each message in a tick of its own, so a script
      // goes out as soon as its message is handled, not after every other message this turn of the
      // event loop read (a release would wait for them: docs/architecture.md, Releases first).
      process.nextTick(() => {
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
   * Writes the scripts handed over in this tick, in their order, into the socket corked for them (they
   * go out when it is uncorked, at the end of the tick; after a reconnect, into the new one at once). A
   * command sent on the connection after this goes out after them (writeHandedOver(redis), before a WAIT).
   */
  writeHandedOver(): void {
    const handed = this.handed;
    if (!handed) return;
    this.handed = undefined;
    this.releases = 0;
    for (const entry of handed) this.redis.sendCommand(entry.command);
  }
}
