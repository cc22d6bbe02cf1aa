import type { RenewArgs, RenewLock, RenewOutcome, RenewResult } from "../../store.js";
import { keySlot } from "../records/key-slot.js";
import type { LockKeyCache } from "../records/lock-key-cache.js";
import type { ScriptArg } from "./runner/lock-scripts.js";
import { ScriptBody } from "./runner/script-command.js";

/**
 * renew.lua's codes (its contract header): per waiter pair one of these; per owner "token count" of the
 * renewed hold, or Gone (not held).
 */
export enum RenewCode {
  /** Not held / not queued: expired, or never there. */
  Gone = 0,
  /** The waiter's lease was pushed. */
  Queued = 1,
  /** No longer queued but granted meanwhile: its hold was renewed in its place. */
  Granted = 2,
}

/** Locks renewed by one renew.lua at most, so that one keepalive never holds Redis for long. */
export const RENEW_LOCKS_PER_SCRIPT = 500;

/**
 * What of RedisStore renew.lua needs: its key cache, the fence retention, whether it runs on a Cluster,
 * and the session records (their keys, and a touch of one on its own).
 */
export interface RenewScriptDeps {
  lockKeys: LockKeyCache;
  fenceRetainMs: number;
  cluster: boolean;
  /** The session records (SessionRecords): a record's key, and a touch of one on its own. */
  sessions: { key(sessionId: string): string; touch(sessionId: string, ttlMs: number): Promise<boolean> };
  /** Where renew.lua bodies of frozen lock lists are kept, and how one is run; without it none is kept. */
  bodies?: RenewBodies;
}

/**
 * The renew.lua bodies (keys and ARGV in RESP) built for frozen lock lists (RenewArgs.locks), by the list:
 * a session's idle keepalives pass the same list and send the same bytes, so they are built once (issue 25).
 * An entry lives as long as its list. `run` sends one, as RedisStore's acknowledged script run.
 */
export interface RenewBodies {
  kept: WeakMap<readonly RenewLock[], KeptBody>;
  run(body: ScriptBody): Promise<unknown>;
}

/** A kept body and what else it was built from. */
export interface KeptBody {
  sessionId: string;
  ttlMs: number;
  touches: boolean;
  body: ScriptBody;
}

/**
 * RedisStore.renew: one renew.lua for all the session's locks on one Redis (or Sentinel master), in
 * runs of at most RENEW_LOCKS_PER_SCRIPT. On Redis Cluster a script runs in one slot and each lock's
 * keys hash on its own name, so there it is one script per slot the locks fall in (docs/data-model.md).
 * With `touchSession` the first script also touches the session record on one Redis; on Cluster (its key
 * hashes to a slot of its own), or with no lock, the record gets its own PEXPIRE beside the scripts.
 * Everything is sent; the call rejects with a script's first failure once all have answered, while that
 * PEXPIRE's failure comes back as RenewResult.touchError beside the scripts' answers. `run` is
 * RedisStore's acknowledged script run.
 */
export function runRenew(
  args: RenewArgs,
  deps: RenewScriptDeps,
  run: (keys: readonly string[], args: ScriptArg[]) => Promise<unknown>,
): Promise<RenewResult> {
  const { bodies } = deps;
  const { length } = args.locks;
  // A frozen list on one Redis: one script, whose body is kept for the next renewal of the same list.
  const oneScript = !deps.cluster && length > 0 && length <= RENEW_LOCKS_PER_SCRIPT;
  if (bodies && oneScript && Object.isFrozen(args.locks)) return renewKept(args, deps, bodies);
  return renewBuilt(args, deps, run);
}

/** runRenew building every script's keys and ARGV for this call. */
async function renewBuilt(
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
    const keys = renewKeys(locks.length, (k) => lockKeys[indexes === undefined ? k : indexes[k]]);
    const touches = touchInScript && r === 0;
    if (touches) keys.push(deps.sessions.key(args.sessionId));
    const reply = (await run(keys, renewArgs(args.sessionId, args.ttlMs, deps.fenceRetainMs, locks))) as (
      | string
      | number
    )[];
    if (touches) sessionAlive = reply.pop() === 1;
    translateRenew(reply, locks).forEach((outcome, k) => {
      outcomes[indexes === undefined ? k : indexes[k]] = outcome;
    });
  });
  let touchError: { reason: unknown } | undefined;
  // The record's own touch (Cluster) failing leaves the scripts' answers good: they are returned with it.
  if (args.touchSession && !touchInScript)
    calls.push(
      deps.sessions.touch(args.sessionId, args.ttlMs).then(
        (alive) => {
          sessionAlive = alive;
        },
        (reason: unknown) => {
          touchError = { reason };
        },
      ),
    );
  // One call (a single Redis, few locks) needs no settling of many.
  if (calls.length === 1) await calls[0];
  else {
    const failed = (await Promise.allSettled(calls)).find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }
  if (!args.touchSession) return { locks: outcomes };
  return touchError ? { locks: outcomes, sessionAlive, touchError } : { locks: outcomes, sessionAlive };
}

/** runRenew for a frozen lock list, with the body kept for it (built now if there is none yet for the same session, TTL and touch). */
async function renewKept(args: RenewArgs, deps: RenewScriptDeps, bodies: RenewBodies): Promise<RenewResult> {
  const { sessionId, ttlMs, locks } = args;
  const touches = args.touchSession === true;
  let kept = bodies.kept.get(locks);
  if (kept?.sessionId !== sessionId || kept.ttlMs !== ttlMs || kept.touches !== touches) {
    const keys = renewKeys(locks.length, (k) => deps.lockKeys.keysOf(locks[k].name));
    if (touches) keys.push(deps.sessions.key(sessionId));
    kept = {
      sessionId,
      ttlMs,
      touches,
      body: new ScriptBody(keys, renewArgs(sessionId, ttlMs, deps.fenceRetainMs, locks)),
    };
    bodies.kept.set(locks, kept);
  }
  const reply = (await bodies.run(kept.body)) as (string | number)[];
  if (!touches) return { locks: translateRenew(reply, locks) };
  const sessionAlive = reply.pop() === 1;
  return { locks: translateRenew(reply, locks), sessionAlive };
}

/** renew.lua's KEYS for `count` locks, given each one's key set: holders, leases, fence, data per lock. */
function renewKeys(count: number, keysOf: (k: number) => readonly string[]): string[] {
  const keys: string[] = [];
  for (let k = 0; k < count; k++) {
    const [holders, data, , leases, fence] = keysOf(k);
    keys.push(holders, leases, fence, data);
  }
  return keys;
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

/** renew.lua's ARGV: per lock, its holder and waiter counts, holder owners, then a (request id, owner) pair per waiter. */
export function renewArgs(
  sessionId: string,
  ttlMs: number,
  fenceRetainMs: number,
  locks: readonly RenewLock[],
): ScriptArg[] {
  const args: ScriptArg[] = [sessionId, ttlMs, fenceRetainMs];
  for (const { owners, waiters } of locks) {
    args.push(owners.length, waiters.length, ...owners);
    for (const w of waiters) args.push(w.requestId, w.owner);
  }
  return args;
}

/**
 * Translates a renew.lua reply into one outcome per lock of `locks` (in the order they were sent): per
 * lock, its owners' "token count" strings (RenewCode.Gone: lost), then one code per waiter. An unknown
 * waiter code throws.
 */
export function translateRenew(
  reply: (string | number)[],
  locks: readonly { owners: readonly unknown[]; waiters: readonly unknown[] }[],
): RenewOutcome[] {
  // Read in place, one entry after the other: a keepalive renews every lock of its session.
  let at = 0;
  return locks.map(({ owners, waiters }) => {
    const holds: RenewOutcome["holds"] = new Array(owners.length);
    for (let i = 0; i < owners.length; i++) holds[i] = renewedHold(reply[at++]);
    const waiting: RenewOutcome["waiters"] = new Array(waiters.length);
    for (let i = 0; i < waiters.length; i++) waiting[i] = waiterStatus(reply[at++]);
    return { holds, waiters: waiting };
  });
}

/** One owner's entry of renew.lua's reply: "token count" of the renewed hold, or RenewCode.Gone (not held). */
function renewedHold(entry: string | number): RenewOutcome["holds"][number] {
  if (typeof entry !== "string") return null;
  const space = entry.indexOf(" ");
  return { token: BigInt(entry.slice(0, space)), count: Number(entry.slice(space + 1)) };
}

/** One (request, owner) pair's entry of renew.lua's reply. */
function waiterStatus(code: string | number): RenewOutcome["waiters"][number] {
  switch (Number(code)) {
    case RenewCode.Queued:
      return "queued";
    case RenewCode.Granted:
      return "granted";
    case RenewCode.Gone:
      return "gone";
    default:
      throw new Error(`unknown renew.lua waiter code ${code}`);
  }
}
