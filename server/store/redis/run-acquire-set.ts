import type { AcquireSetArgs, AcquireSetOutcome } from "../store.js";
import { crossSlot } from "./records/key-slot.js";
import type { LockKeyCache } from "./records/lock-key-cache.js";
import type { LockScriptArgs } from "./scripts/lock-script-args.js";
import type { ScriptArg } from "./scripts/lock-scripts.js";
import { type ScriptReply, translateSet } from "./scripts/script-code.js";

/** What of RedisStore acquire-set.lua needs: its key cache, its ARGV builder, and whether it runs on a Cluster. */
export interface SetScriptDeps {
  lockKeys: LockKeyCache;
  argv: LockScriptArgs;
  cluster: boolean;
}

/**
 * RedisStore.acquireSet: acquire-set.lua over the 6 keys of every name of the set. On Redis Cluster a
 * script runs in one slot, so a set whose names hash to two slots is answered `cross-slot` and nothing
 * runs (docs/multi-lock.md). `run` is RedisStore's acknowledged script run.
 */
export async function runAcquireSet(
  args: AcquireSetArgs,
  deps: SetScriptDeps,
  run: (keys: readonly string[], args: ScriptArg[]) => Promise<unknown>,
): Promise<AcquireSetOutcome> {
  const locks = args.locks.map((l) => deps.lockKeys.of(l.name));
  const split = deps.cluster ? crossSlot(locks.map((l) => l.keys[0])) : undefined;
  if (split) return { kind: "cross-slot", ...split };
  const reply = await run(
    locks.flatMap((l) => l.keys),
    deps.argv.acquireSet(args, locks),
  );
  return translateSet(reply as ScriptReply);
}
