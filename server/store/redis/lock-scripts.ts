import { Redis } from "ioredis";
import type { RedisClient } from "./redis-connection.js";
import { scriptSource } from "./script-source.js";

/** One script argument; Buffers pass binary values unchanged. */
export type ScriptArg = string | number | Buffer;

/**
 * The operations, one Lua file each under ./scripts (includes expanded: script-source.ts), with the
 * number of KEYS each takes — its header names them; test/store/scripts/script-source.test.ts checks both agree.
 */
export const SCRIPTS = {
  acquire: { numberOfKeys: 6 }, // holders, data, queue, leases, fence, version
  release: { numberOfKeys: 6 }, // holders, data, queue, leases, fence, version
  check: { numberOfKeys: 6 }, // holders, data, queue, leases, fence, version
  renew: { numberOfKeys: 4 }, // holders, leases, fence, data
  revoke: { numberOfKeys: 6 }, // holders, data, queue, leases, fence, version
  proclaim: { numberOfKeys: 3 }, // holders, data, version
  describe: { numberOfKeys: 5 }, // holders, data, queue, leases, version
} as const;

/** One of the scripts. */
export type ScriptName = keyof typeof SCRIPTS;

/**
 * Bump whenever the text Redis runs changes, so coordinators of two versions never share a command
 * name; docs/data-model.md (Upgrading) says whether a change matters to a rolling upgrade.
 */
export const SCRIPTS_VERSION = 8;

/**
 * Registers every script with ioredis `defineCommand` (EVALSHA with a NOSCRIPT fallback) under
 * a versioned command name, and runs them. Rejects with the Redis error as ioredis reports it.
 */
export class LockScripts {
  /** True while the command socket is corked, until the setImmediate that uncorks it. */
  private corked = false;

  constructor(private readonly redis: RedisClient) {
    for (const name of Object.keys(SCRIPTS) as ScriptName[]) {
      redis.defineCommand(commandName(name), { numberOfKeys: SCRIPTS[name].numberOfKeys, lua: scriptSource(name) });
    }
  }

  /** Runs one script with its keys and arguments and returns its raw reply (bulk strings as text). */
  run(name: ScriptName, keys: readonly string[], args: ScriptArg[]): Promise<unknown> {
    return this.call(commandName(name), keys, args);
  }

  /** Like `run`, with bulk strings in the reply as Buffers (for binary holder values). */
  runBuffer(name: ScriptName, keys: readonly string[], args: ScriptArg[]): Promise<unknown> {
    return this.call(`${commandName(name)}Buffer`, keys, args);
  }

  private call(command: string, keys: readonly string[], args: ScriptArg[]): Promise<unknown> {
    this.corkForThisTurn();
    // defineCommand adds methods ioredis cannot type; this is the one place that reaches them.
    const method = (this.redis as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[command];
    return method.call(this.redis, ...keys, ...args);
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
    });
  }
}

function commandName(name: ScriptName): string {
  return `turnstile_${name}_v${SCRIPTS_VERSION}`;
}
