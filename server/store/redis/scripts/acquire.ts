import type { AcquireArgs, AcquireOutcome } from "../../store.js";
import type { LockKeySet } from "../records/lock-key-cache.js";
import type { ScriptArg } from "./runner/lock-scripts.js";
import { bufferOf, type ScriptContext } from "./script-context.js";

/** acquire.lua's return codes, the first element of its reply (its contract header). */
export enum AcquireCode {
  /** {1, token, count}: count > 1 re-entered, same token. */
  Granted = 1,
  /** {2, position, ms until the earliest holder lease ends}. */
  Queued = 2,
  /** {3[, ms]}: may wait was 0; ms the lock-delay left (absent or <= 0: none in force). */
  Busy = 3,
  /** {4, limit in force}: the shared limit differs. */
  Conflict = 4,
  /** {5}: a shared holder asked exclusive. */
  Upgrade = 5,
}

/** acquire.lua's ARGV; `lock` is the key set of `args.name`. */
export function acquireArgs(context: ScriptContext, args: AcquireArgs, lock: LockKeySet): ScriptArg[] {
  return [
    args.sessionId,
    args.owner,
    args.requestId,
    args.ttlMs,
    args.mode === "exclusive" ? 1 : 2,
    args.limit,
    args.mayWait ? 1 : 0,
    context.coordinatorId,
    context.fenceRetainMs,
    bufferOf(args.value),
    lock.events,
    context.publish,
    context.writer.floors(lock.keys[0]),
    // Only when set: a claim without a lock-delay or priority sends nothing more (the message path's cost).
    ...(args.priority ? [args.lockDelayMs ?? 0, args.priority] : args.lockDelayMs ? [args.lockDelayMs] : []),
  ];
}

/** One priority's span of queue scores (includes/queue-rank.lua's RANK, 2^44). */
const RANK = 2 ** 44;

/** The priority a queue score stands for (queue-rank.lua: seq − priority × 2^44, 0 < seq < 2^44). */
export function priorityOf(score: number): number {
  return score < 0 ? Math.ceil(-score / RANK) : 0;
}

/**
 * Translates acquire.lua's reply into the store's outcome. An unknown code throws: it means the script
 * and this enum disagree, which is a bug, not a runtime condition.
 */
export function translateAcquire(reply: unknown[]): AcquireOutcome {
  const [code, a, b] = reply;
  switch (code as AcquireCode) {
    case AcquireCode.Granted:
      return { kind: "granted", token: BigInt(String(a)), holdCount: Number(b) };
    case AcquireCode.Queued:
      return { kind: "queued", position: Number(a), recheckInMs: Number(b) };
    case AcquireCode.Busy:
      return Number(a) > 0 ? { kind: "busy", delayMs: Number(a) } : { kind: "busy" };
    case AcquireCode.Conflict:
      return { kind: "conflict", limitInForce: Number(a) };
    case AcquireCode.Upgrade:
      return { kind: "upgrade" };
    default:
      throw new Error(`unknown acquire.lua return code ${code}`);
  }
}

/** Sends acquire.lua on the lock's 6 keys, acknowledged; its reply is translateAcquire's (one promise: the hot path's). */
export function sendAcquire(context: ScriptContext, args: AcquireArgs): Promise<unknown> {
  const lock = context.lockKeys.of(args.name);
  return context.run("acquire", lock.keys, acquireArgs(context, args, lock));
}
