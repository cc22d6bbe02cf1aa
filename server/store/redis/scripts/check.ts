import type { CheckOutcome, Claim, WaiterStatus } from "../../store.js";
import type { ScriptArg } from "./runner/lock-scripts.js";
import { grantArgs, type ScriptContext } from "./script-context.js";

/**
 * check.lua's codes (its contract header): its reply is `{ms or NoDeadline, grants, statuses}`, a status
 * per waiter asked about being Queued, Gone or else the token of its grant.
 */
export enum CheckCode {
  /** In place of the ms: no holder lease or lock-delay ends (nobody holds the lock). */
  NoDeadline = -1,
  /** The waiter is still queued. */
  Queued = "q",
  /** The waiter is gone: expired or never queued. */
  Gone = "",
}

/** check.lua's ARGV: the grant arguments, then a (queue entry, holder) pair per waiter. */
export function checkArgs(context: ScriptContext, name: string, waiters: readonly Claim[]): ScriptArg[] {
  const pairs = waiters.flatMap((w) => [`${w.sessionId}:${w.requestId}`, `${w.sessionId}:${w.owner}`]);
  return [...grantArgs(context, name), ...pairs];
}

/** Translates check.lua's reply (`{ms, grants, statuses}`) into the store's outcome; the grants are the caller's. */
export function translateCheck(reply: unknown[]): CheckOutcome {
  const statuses = (reply[2] as string[]).map((s): WaiterStatus => {
    if (s === CheckCode.Queued) return { kind: "queued" };
    return s === CheckCode.Gone ? { kind: "gone" } : { kind: "granted", token: BigInt(s) };
  });
  return { statuses, recheckInMs: Number(reply[0]) };
}

/**
 * Sends check.lua on the lock's 6 keys for `waiters`, acknowledged; its reply is translateCheck's, and
 * checkGrants' for the outbox.
 */
export function sendCheck(context: ScriptContext, name: string, waiters: readonly Claim[]): Promise<unknown> {
  const args = checkArgs(context, name, waiters);
  return context.run("check", context.lockKeys.of(name).keys, args, name, checkGrants);
}

/** The grants of a check.lua reply ("waiter, token" pairs). */
export function checkGrants(reply: unknown[]): string[] {
  return reply[1] as string[];
}
