import type { RenewArgs, RenewOutcome } from "../store.js";
import { keySlot } from "./records/key-slot.js";
import type { LockKeyCache } from "./records/lock-key-cache.js";
import type { LockScriptArgs } from "./scripts/lock-script-args.js";
import type { ScriptArg } from "./scripts/lock-scripts.js";
import { translateRenew } from "./scripts/script-code.js";

/** Locks renewed by one renew.lua at most, so that one keepalive never holds Redis for long. */
export const RENEW_LOCKS_PER_SCRIPT = 500;

/** What of RedisStore renew.lua needs: its key cache, its ARGV builder, and whether it runs on a Cluster. */
export interface RenewScriptDeps {
  lockKeys: LockKeyCache;
  argv: LockScriptArgs;
  cluster: boolean;
}

/**
 * RedisStore.renew: one renew.lua for all the session's locks on one Redis (or Sentinel master), in
 * runs of at most RENEW_LOCKS_PER_SCRIPT. On Redis Cluster a script runs in one slot and each lock's
 * keys hash on its own name, so there it is one script per slot the locks fall in (docs/data-model.md).
 * Every script is sent; the call rejects with the first failure once all have answered. `run` is
 * RedisStore's acknowledged script run.
 */
export async function runRenew(
  args: RenewArgs,
  deps: RenewScriptDeps,
  run: (keys: readonly string[], args: ScriptArg[]) => Promise<unknown>,
): Promise<RenewOutcome[]> {
  const outcomes: RenewOutcome[] = new Array(args.locks.length);
  const lockKeys = args.locks.map((l) => deps.lockKeys.keysOf(l.name));
  const batches = [...groups(lockKeys, deps.cluster)].map(async (indexes) => {
    const locks = indexes.map((i) => args.locks[i]);
    const keys: string[] = [];
    for (const i of indexes) {
      const [holders, data, , leases, fence] = lockKeys[i];
      keys.push(holders, leases, fence, data);
    }
    const reply = (await run(keys, deps.argv.renew(args.sessionId, args.ttlMs, locks))) as (string | number)[];
    translateRenew(reply, locks).forEach((outcome, k) => {
      outcomes[indexes[k]] = outcome;
    });
  });
  // One batch (a single Redis, few locks) needs no settling of many.
  if (batches.length === 1) await batches[0];
  else {
    const failed = (await Promise.allSettled(batches)).find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }
  return outcomes;
}

/** The indexes of the locks (by their keys) each script renews: all, or per Cluster slot; in runs of at most the limit. */
function* groups(lockKeys: readonly (readonly string[])[], cluster: boolean): Generator<number[]> {
  const bySlot = new Map<number, number[]>();
  lockKeys.forEach((keys, i) => {
    const slot = cluster ? keySlot(keys[0]) : 0;
    const group = bySlot.get(slot);
    if (group) group.push(i);
    else bySlot.set(slot, [i]);
  });
  for (const group of bySlot.values())
    for (let at = 0; at < group.length; at += RENEW_LOCKS_PER_SCRIPT)
      yield group.slice(at, at + RENEW_LOCKS_PER_SCRIPT);
}
