import type { Claim, RevokeOutcome } from "../../store.js";
import { revocationChannel } from "../records/lock-keys.js";
import type { ScriptArg } from "./runner/lock-scripts.js";
import { grantArgs, type ScriptContext } from "./script-context.js";

/** revoke.lua's return codes, the first element of its reply `{code, token, count, grants}` (its contract header). */
export enum RevokeCode {
  /** The hold was taken away: its token and count follow. */
  Revoked = 21,
  /** That session and owner hold no live lease on the lock. */
  NotHeld = 22,
  /** The session id contains ':' (nothing read or changed). */
  InvalidSession = 23,
}

/** revoke.lua's ARGV. */
export function revokeArgs(context: ScriptContext, hold: Omit<Claim, "requestId">): ScriptArg[] {
  return [hold.sessionId, hold.owner, ...grantArgs(context, hold.name), revocationChannel(context.prefix)];
}

/** Translates revoke.lua's reply into the store's outcome; an unknown code throws. */
export function translateRevoke(reply: unknown[]): RevokeOutcome {
  const [code, token, count] = reply;
  if (code === RevokeCode.Revoked) return { kind: "revoked", token: BigInt(String(token)), holdCount: Number(count) };
  if (code === RevokeCode.NotHeld) return { kind: "not-held" };
  // Unreachable through the API (the validator refuses such ids first): a bug if it happens.
  if (code === RevokeCode.InvalidSession) throw new Error("revoke.lua refused a session id containing ':'");
  throw new Error(`unknown revoke.lua return code ${code}`);
}

/** Sends revoke.lua on the lock's 6 keys, acknowledged; its reply is translateRevoke's, and revokeGrants' for the outbox. */
export function sendRevoke(context: ScriptContext, hold: Omit<Claim, "requestId">): Promise<unknown> {
  const args = revokeArgs(context, hold);
  return context.run("revoke", context.lockKeys.of(hold.name).keys, args, hold.name, revokeGrants);
}

/** The grants of a revoke.lua reply ("waiter, token" pairs). */
export function revokeGrants(reply: unknown[]): string[] {
  return reply[3] as string[];
}
