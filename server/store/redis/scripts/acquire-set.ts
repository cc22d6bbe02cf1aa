import type { AcquireSetArgs, AcquireSetOutcome } from "../../store.js";
import { crossSlot } from "../records/key-slot.js";
import type { LockKeySet } from "../records/lock-key-cache.js";
import type { ScriptArg } from "./runner/lock-scripts.js";
import { bufferOf, type ScriptContext } from "./script-context.js";

/** acquire-set.lua's return codes, the first element of its reply (its contract header; i: a name's 1-based index). */
export enum AcquireSetCode {
  /** {1, {token, ...}} in name order. */
  Granted = 1,
  /** {2, i, position, ms}: queued; i is the first name it waits for. */
  Queued = 2,
  /** {3, i}: may wait was 0. */
  Busy = 3,
  /** {4, i, limit}: the shared limit in force on name i differs. */
  Conflict = 4,
  /** {6, i}: the owner holds name i already (outside this set). */
  Held = 6,
}

/** acquire-set.lua's ARGV; `locks` are the key sets of `args.locks`, in order. */
export function acquireSetArgs(context: ScriptContext, args: AcquireSetArgs, locks: LockKeySet[]): ScriptArg[] {
  const head = [args.sessionId, args.owner, args.requestId, args.ttlMs, args.mayWait ? 1 : 0, context.coordinatorId];
  const floors = context.writer.floors(locks[0].keys[0]);
  const shared = [context.fenceRetainMs, bufferOf(args.value), context.publish, floors];
  const names = args.locks.map((l) => l.name).join("\n");
  const each = args.locks.flatMap((l, i) => [l.mode === "exclusive" ? 1 : 2, l.limit, locks[i].events]);
  // Only when some hold gets a lock-delay: a set without one sends nothing more.
  const delays = args.locks.some((l) => l.lockDelayMs) ? args.locks.map((l) => l.lockDelayMs ?? 0) : [];
  return [...head, ...shared, names, ...each, ...delays];
}

/** Translates acquire-set.lua's reply (name indexes 1-based in Lua, 0-based here); an unknown code throws. */
export function translateAcquireSet(reply: unknown[]): AcquireSetOutcome {
  const [code, a, b, c] = reply;
  const index = Number(a) - 1;
  switch (code as AcquireSetCode) {
    case AcquireSetCode.Granted:
      return { kind: "granted", tokens: (a as string[]).map((t) => BigInt(t)) };
    case AcquireSetCode.Queued:
      return { kind: "queued", index, position: Number(b), recheckInMs: Number(c) };
    case AcquireSetCode.Busy:
      return { kind: "busy", index };
    case AcquireSetCode.Conflict:
      return { kind: "conflict", index, limitInForce: Number(b) };
    case AcquireSetCode.Held:
      return { kind: "held", index };
    default:
      throw new Error(`unknown acquire-set.lua return code ${code}`);
  }
}

/**
 * RedisStore.acquireSet: acquire-set.lua over the 6 keys of every name of the set, run acknowledged. On
 * Redis Cluster (`cluster`) a script runs in one slot, so a set whose names hash to two slots is answered
 * `cross-slot` and nothing runs (docs/multi-lock.md).
 */
export async function runAcquireSet(
  context: ScriptContext,
  args: AcquireSetArgs,
  cluster: boolean,
): Promise<AcquireSetOutcome> {
  const locks = args.locks.map((l) => context.lockKeys.of(l.name));
  const split = cluster ? crossSlot(locks.map((l) => l.keys[0])) : undefined;
  if (split) return { kind: "cross-slot", ...split };
  const reply = await context.run(
    "acquire-set",
    locks.flatMap((l) => l.keys),
    acquireSetArgs(context, args, locks),
  );
  return translateAcquireSet(reply as unknown[]);
}
