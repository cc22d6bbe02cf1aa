import type { ScriptArg } from "./runner/lock-scripts.js";
import { grantArgs, type ScriptContext } from "./script-context.js";

/** release-token.lua's return codes, the first element of its reply `{code, dropped, grants}` (its contract header). */
export enum ReleaseTokenCode {
  /** At least one hold still had its token and is gone now. */
  Dropped = 41,
  /** None did (the release took effect here, or the hold ended anyway). */
  NotHeld = 42,
}

/** A hold as the journal replays its release: by its fencing token. */
export interface TokenHold {
  sessionId: string;
  owner: string;
  token: bigint;
}

/** release-token.lua's ARGV: the grant arguments, then (session, owner, token) per hold. */
export function releaseTokenArgs(context: ScriptContext, name: string, holds: readonly TokenHold[]): ScriptArg[] {
  return [...grantArgs(context, name), ...holds.flatMap((h) => [h.sessionId, h.owner, String(h.token)])];
}

/** Translates release-token.lua's reply: the code and how many holds went; an unknown code throws. */
export function translateReleaseToken(reply: unknown[]): { code: ReleaseTokenCode; dropped: number } {
  const [code, dropped] = reply;
  if (code !== ReleaseTokenCode.Dropped && code !== ReleaseTokenCode.NotHeld) {
    throw new Error(`unknown release-token.lua return code ${code}`);
  }
  return { code, dropped: Number(dropped) };
}

/**
 * A journal replay's releases on one lock (journal/journal-replay.ts): release-token.lua drops each hold
 * of (session, owner) on `name` only while it has that fencing token, run acknowledged. Answers how many
 * holds went and the grants the script made, for the outbox.
 */
export async function runReleaseToken(
  context: ScriptContext,
  name: string,
  holds: readonly TokenHold[],
): Promise<{ dropped: number; grants: string[] }> {
  const args = releaseTokenArgs(context, name, holds);
  const reply = (await context.run("release-token", context.lockKeys.of(name).keys, args, name, grantsOf)) as unknown[];
  return { dropped: translateReleaseToken(reply).dropped, grants: grantsOf(reply) };
}

/** The grants of a release-token.lua reply. */
function grantsOf(reply: unknown[]): string[] {
  return reply[2] as string[];
}
