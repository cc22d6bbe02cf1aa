import { readFileSync } from "node:fs";
import { Redis } from "ioredis";
import type { RedisClient } from "./redis-connection.js";

/** One script argument; Buffers pass binary values unchanged. */
export type ScriptArg = string | number | Buffer;

/** The operations, one Lua file each under ./scripts. */
export type ScriptName = "acquire" | "release" | "check" | "renew" | "revoke" | "proclaim" | "describe";

const KEY_COUNTS: Record<ScriptName, number> = {
  acquire: 6,
  release: 6,
  check: 6,
  renew: 4,
  revoke: 6,
  proclaim: 3,
  describe: 5,
};
// Bump when any script's contract changes, so coordinators of two versions never share a name.
const VERSION = 5;

/**
 * Registers every script with ioredis `defineCommand` (EVALSHA with a NOSCRIPT fallback) under
 * a versioned command name, and runs them. Rejects with the Redis error as ioredis reports it.
 */
export class LockScripts {
  /** True while the command socket is corked, until the setImmediate that uncorks it. */
  private corked = false;

  constructor(private readonly redis: RedisClient) {
    for (const name of Object.keys(KEY_COUNTS) as ScriptName[]) {
      const lua = readFileSync(new URL(`./scripts/${name}.lua`, import.meta.url), "utf8");
      redis.defineCommand(commandName(name), { numberOfKeys: KEY_COUNTS[name], lua });
    }
  }

  /** Runs one script with its keys and arguments and returns its raw reply (bulk strings as text). */
  run(name: ScriptName, keys: string[], args: ScriptArg[]): Promise<unknown> {
    return this.call(commandName(name), keys, args);
  }

  /** Like `run`, with bulk strings in the reply as Buffers (for binary holder values). */
  runBuffer(name: ScriptName, keys: string[], args: ScriptArg[]): Promise<unknown> {
    return this.call(`${commandName(name)}Buffer`, keys, args);
  }

  private call(command: string, keys: string[], args: ScriptArg[]): Promise<unknown> {
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
  return `turnstile_${name}_v${VERSION}`;
}
