import type { RenewArgs, RenewOutcome, RenewResult } from "../store.js";
import { keySlot } from "./records/key-slot.js";
import type { LockKeyCache } from "./records/lock-key-cache.js";
import type { SessionRecords } from "./records/session-records.js";
import type { LockScriptArgs } from "./scripts/lock-script-args.js";
import type { ScriptArg } from "./scripts/lock-scripts.js";
import { translateRenew } from "./scripts/script-code.js";

/** Locks renewed by one renew.lua at most, so that one keepalive never holds Redis for long. */
export const RENEW_LOCKS_PER_SCRIPT = 500;

/**
 * What of RedisStore renew.lua needs: its key cache, its ARGV builder, whether it runs on a Cluster, and
 * the session records (their keys, and a touch of one on its own).
 */
export interface RenewScriptDeps {
  lockKeys: LockKeyCache;
  argv: LockScriptArgs;
  cluster: boolean;
  sessions: Pick<SessionRecords, "key" | "touch">;
}

/**
 * RedisStore.renew: one renew.lua for all the session's locks on one Redis (or Sentinel master), in
 * runs of at most RENEW_LOCKS_PER_SCRIPT. On Redis Cluster a script runs in one slot and each lock's
 * keys hash on its own name, so there it is one script per slot the locks fall in (docs/data-model.md).
 * With `touchSession` the first script also touches the session record on one Redis; on Cluster (its key
 * hashes to a slot of its own), or with no lock, the record gets its own PEXPIRE beside the scripts.
 * Everything is sent; the call rejects with the first failure once all have answered. `run` is
 * RedisStore's acknowledged script run.
 */
export async function runRenew(
  args: RenewArgs,
  deps: RenewScriptDeps,
  run: (keys: readonly string[], args: ScriptArg[]) => Promise<unknown>,
): Promise<RenewResult> {
  const outcomes: RenewOutcome[] = new Array(args.locks.length);
  const lockKeys = args.locks.map((l) => deps.lockKeys.keysOf(l.name));
  const runs = groups(lockKeys, deps.cluster);
  const touchInScript = args.touchSession === true && !deps.cluster && runs.length > 0;
  let sessionAlive: boolean | undefined;
  const calls = runs.map(async (indexes, r) => {
    // The usual single run renews the caller's own array of locks, in its order.
    const locks = indexes === undefined ? args.locks : indexes.map((i) => args.locks[i]);
    const keys: string[] = [];
    for (let k = 0; k < locks.length; k++) {
      const [holders, data, , leases, fence] = lockKeys[indexes === undefined ? k : indexes[k]];
      keys.push(holders, leases, fence, data);
    }
    const touches = touchInScript && r === 0;
    if (touches) keys.push(deps.sessions.key(args.sessionId));
    const reply = (await run(keys, deps.argv.renew(args.sessionId, args.ttlMs, locks))) as (string | number)[];
    if (touches) sessionAlive = reply.pop() === 1;
    translateRenew(reply, locks).forEach((outcome, k) => {
      outcomes[indexes === undefined ? k : indexes[k]] = outcome;
    });
  });
  if (args.touchSession && !touchInScript)
    calls.push(
      deps.sessions.touch(args.sessionId, args.ttlMs).then((alive) => {
        sessionAlive = alive;
      }),
    );
  // One call (a single Redis, few locks) needs no settling of many.
  if (calls.length === 1) await calls[0];
  else {
    const failed = (await Promise.allSettled(calls)).find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }
  return args.touchSession ? { locks: outcomes, sessionAlive } : { locks: outcomes };
}

/**
 * The indexes of the locks (by their keys) each script renews: per Cluster slot, in runs of at most the
 * limit; `undefined` for the one run of all of them in order (one Redis, few locks: nothing to group).
 */
function groups(lockKeys: readonly (readonly string[])[], cluster: boolean): (number[] | undefined)[] {
  if (!cluster && lockKeys.length <= RENEW_LOCKS_PER_SCRIPT) return lockKeys.length > 0 ? [undefined] : [];
  const bySlot = new Map<number, number[]>();
  lockKeys.forEach((keys, i) => {
    const slot = cluster ? keySlot(keys[0]) : 0;
    const group = bySlot.get(slot);
    if (group) group.push(i);
    else bySlot.set(slot, [i]);
  });
  const runs: number[][] = [];
  for (const group of bySlot.values())
    for (let at = 0; at < group.length; at += RENEW_LOCKS_PER_SCRIPT)
      runs.push(group.slice(at, at + RENEW_LOCKS_PER_SCRIPT));
  return runs;
}
