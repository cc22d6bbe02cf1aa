import type { LockKeyCache } from "../records/lock-key-cache.js";
import { grantChannel } from "../records/lock-keys.js";
import type { StoreWriter } from "../writes/store-writer.js";
import type { ScriptArg, ScriptName } from "./runner/lock-scripts.js";

/**
 * How the Redis store runs a script: acknowledged (StoreWriter.write); when the WAIT falls short, the
 * grants of the reply (`grants` picks them) to lock `lock` are held back until a later WAIT covers them.
 */
export type ScriptRun = (
  name: ScriptName,
  keys: readonly string[],
  args: ScriptArg[],
  lock?: string,
  grants?: (reply: unknown[]) => unknown,
) => Promise<unknown>;

/**
 * What every script of one RedisStore shares, as each <verb>.ts beside its .lua builds its ARGV (in the
 * order of the script's contract header) and runs it: the coordinator id, the key prefix and fence
 * retention, the publish mode, the lock key cache, the writer (its floors, whether it confirms) and the run.
 */
export interface ScriptContext {
  readonly coordinatorId: string;
  readonly prefix: string;
  readonly fenceRetainMs: number;
  /** The scripts' publish argument: on Cluster a subscriber may sit on another node, out of NUMSUB's sight. */
  readonly publish: "always" | "watched";
  readonly lockKeys: LockKeyCache;
  readonly writer: Pick<StoreWriter, "confirming" | "floors" | "write">;
  readonly run: ScriptRun;
}

/**
 * The ARGV every script that may grant takes, in this order (release.lua's from the coordinator id on):
 * coordinator id, fence retain ms, lock name, grant channel prefix, event channel, publish, floors.
 */
export function grantArgs(context: ScriptContext, name: string): string[] {
  // With acks, other coordinators' grants come back unpublished, to go out once acknowledged.
  const grants = context.writer.confirming ? "" : grantChannel(context.prefix, "");
  const { keys, events } = context.lockKeys.of(name);
  const floors = context.writer.floors(keys[0]);
  return [context.coordinatorId, String(context.fenceRetainMs), name, grants, events, context.publish, floors];
}

/** A holder value as a script argument: the same bytes, no copy (empty when absent). */
export function bufferOf(value: Uint8Array | undefined): Buffer {
  return value ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : Buffer.alloc(0);
}
