import type { Claim, ReleaseOutcome } from "../../store.js";
import type { ScriptArg } from "./runner/lock-scripts.js";
import { grantArgs, type ScriptContext } from "./script-context.js";

/** release.lua's return codes, the first element of its reply `{code, holds left, grants}` (its contract header). */
export enum ReleaseCode {
  /** One hold (or all) of the owner let go; holds left follows. */
  Released = 11,
  /** The owner holds no live lease on the lock. */
  NotHeld = 12,
  /** The waiter left the queue. */
  Withdrawn = 13,
  /** A cancel raced the waiter's grant: the grant was let go. */
  GrantReleased = 14,
  /** No such waiter or grant. */
  Gone = 15,
}

/** What release.lua lets go: one hold or all of the owner's (a release), or a waiter (a withdrawal). */
export type LetGo = "one" | "all" | "cancel" | "abandon";

/** release.lua's ARGV: a release (`one`, `all`; `claim.requestId` '') or a withdrawal (`cancel`, `abandon`). */
export function releaseArgs(context: ScriptContext, claim: Claim, how: LetGo): ScriptArg[] {
  return [claim.sessionId, claim.owner, claim.requestId, how, ...grantArgs(context, claim.name)];
}

/** Translates release.lua's reply into the store's outcome; an unknown code throws. */
export function translateRelease(reply: unknown[]): ReleaseOutcome {
  const [code, left] = reply;
  switch (code as ReleaseCode) {
    case ReleaseCode.Released:
      return { kind: "released", holdCount: Number(left) };
    case ReleaseCode.NotHeld:
      return { kind: "not-held" };
    case ReleaseCode.Withdrawn:
      return { kind: "withdrawn" };
    case ReleaseCode.GrantReleased:
      return { kind: "grant-released" };
    case ReleaseCode.Gone:
      return { kind: "gone" };
    default:
      throw new Error(`unknown release.lua return code ${code}`);
  }
}

/**
 * Sends release.lua on the lock's 6 keys, acknowledged (RedisStore's release and withdraw, a journal
 * replay's cancel); its reply is translateRelease's and releaseGrants'. No promise of its own: the hot path's.
 */
export function sendRelease(context: ScriptContext, claim: Claim, how: LetGo): Promise<unknown> {
  const { name } = claim;
  return context.run("release", context.lockKeys.of(name).keys, releaseArgs(context, claim, how), name, releaseGrants);
}

/** The grants of a release.lua reply ("waiter, token" pairs), for the outbox. */
export function releaseGrants(reply: unknown[]): string[] {
  return reply[2] as string[];
}
