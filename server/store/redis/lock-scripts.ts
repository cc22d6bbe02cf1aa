import { readFileSync } from "node:fs";
import type { RedisClient } from "./redis-connection.js";

/** The operations, one Lua file each under ./scripts. */
export type ScriptName = "acquire" | "release" | "check" | "renew";

const KEY_COUNTS: Record<ScriptName, number> = { acquire: 5, release: 5, check: 5, renew: 4 };
// Bump when any script's contract changes, so coordinators of two versions never share a name.
const VERSION = 1;

/**
 * Registers every script with ioredis `defineCommand` (EVALSHA with a NOSCRIPT fallback) under
 * a versioned command name, and runs them. Rejects with the Redis error as ioredis reports it.
 */
export class LockScripts {
  constructor(private readonly redis: RedisClient) {
    for (const name of Object.keys(KEY_COUNTS) as ScriptName[]) {
      const lua = readFileSync(new URL(`./scripts/${name}.lua`, import.meta.url), "utf8");
      redis.defineCommand(commandName(name), { numberOfKeys: KEY_COUNTS[name], lua });
    }
  }

  /** Runs one script with its keys and arguments and returns its raw reply. */
  run(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    // defineCommand adds methods ioredis cannot type; this is the one place that reaches them.
    const command = (this.redis as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[commandName(name)];
    return command.call(this.redis, ...keys, ...args);
  }
}

function commandName(name: ScriptName): string {
  return `turnstile_${name}_v${VERSION}`;
}
