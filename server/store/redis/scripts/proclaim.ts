import type { Claim } from "../../store.js";
import type { LockKeySet } from "../records/lock-key-cache.js";
import type { ScriptArg } from "./runner/lock-scripts.js";
import { bufferOf, type ScriptContext } from "./script-context.js";

/** proclaim.lua's return codes, its whole reply `{code}` (its contract header). */
export enum ProclaimCode {
  Proclaimed = 31,
  /** That session and owner hold no live lease on the lock. */
  NotHeld = 32,
}

/** proclaim.lua's ARGV; `lock` is the key set of `hold.name`. */
export function proclaimArgs(
  context: ScriptContext,
  hold: Omit<Claim, "requestId">,
  value: Uint8Array,
  lock: LockKeySet,
): ScriptArg[] {
  const floors = context.writer.floors(lock.keys[0]);
  return [hold.sessionId, hold.owner, bufferOf(value), lock.events, context.publish, context.fenceRetainMs, floors];
}

/** Translates proclaim.lua's reply; an unknown code throws. */
export function translateProclaim(reply: unknown[]): "proclaimed" | "not-held" {
  if (reply[0] === ProclaimCode.Proclaimed) return "proclaimed";
  if (reply[0] === ProclaimCode.NotHeld) return "not-held";
  throw new Error(`unknown proclaim.lua return code ${reply[0]}`);
}

/** RedisStore.proclaim: proclaim.lua on the lock's holders, data and version keys, run acknowledged. */
export async function runProclaim(
  context: ScriptContext,
  hold: Omit<Claim, "requestId">,
  value: Uint8Array,
): Promise<"proclaimed" | "not-held"> {
  const lock = context.lockKeys.of(hold.name);
  const [holders, data, , , , version] = lock.keys;
  const args = proclaimArgs(context, hold, value, lock);
  return translateProclaim((await context.run("proclaim", [holders, data, version], args)) as unknown[]);
}
