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
export const SCRIPTS_VERSION = 15;

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
 */
export class LockScripts {
  /** True while the command socket is corked, until the setImmediate that uncorks it. */
  private corked = false;
  private readonly scripts = luaScripts();

  constructor(private readonly redis: RedisClient) {}

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
    return this.send(() => new ScriptCommand(script, keys, args, encoding));
  }

  private send(command: () => ScriptCommand): Promise<unknown> {
    this.corkForThisTurn();
    const first = command();
    return (this.redis.sendCommand(first) as Promise<unknown>).then(undefined, (err: Error) => {
      // The script was not there (a flushed cache): the same command again, which now sends the text.
      if (!err.message.includes("NOSCRIPT")) throw err;
      first.forgetLoaded();
      return this.redis.sendCommand(command());
    });
  }

  /**
   * Holds back socket writes until this turn of the event loop has run, so scripts started by one
   * batch of session messages go out in one write instead of one system call each.
   */
  private corkForThisTurn(): void {
    const socket = this.redis instanceof Redis ? this.redis.stream : undefined;
    if (this.corked || !socket) return;
    this.corked = true;
    socket.cork();
    // setImmediate, not nextTick: grpc-js hands over each message in a tick of its own, and the
    // check phase comes only after every message read in this turn of the event loop.
    setImmediate(() => {
      this.corked = false;
      socket.uncork();
      if (REDIS_FLUSH.hasSubscribers) REDIS_FLUSH.publish({});
    });
  }
}
