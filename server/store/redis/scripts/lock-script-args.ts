import type { AcquireArgs, AcquireSetArgs, Claim, RenewLock } from "../../store.js";
import type { LockKeyCache, LockKeySet } from "../records/lock-key-cache.js";
import { grantChannel, revocationChannel } from "../records/lock-keys.js";
import type { StoreWriter } from "../writes/store-writer.js";
import type { ScriptArg } from "./script-command.js";

/**
 * The ARGV of each lock script, in the order its contract header lists (scripts/<verb>.lua): the
 * request's own fields, then what every call of one RedisStore shares (coordinator id, fence
 * retention, channels, publish mode) and the floors of the master the call is sent to.
 */
export class LockScriptArgs {
  constructor(
    private readonly coordinatorId: string,
    private readonly prefix: string,
    private readonly fenceRetainMs: number,
    /** The scripts' publish argument: on Cluster a subscriber may sit on another node, out of NUMSUB's sight. */
    private readonly publish: "always" | "watched",
    private readonly lockKeys: LockKeyCache,
    private readonly writer: StoreWriter,
  ) {}

  /** acquire.lua's ARGV; `lock` is the key set of `args.name`. */
  acquire(args: AcquireArgs, lock: LockKeySet): ScriptArg[] {
    return [
      args.sessionId,
      args.owner,
      args.requestId,
      args.ttlMs,
      args.mode === "exclusive" ? 1 : 2,
      args.limit,
      args.mayWait ? 1 : 0,
      this.coordinatorId,
      this.fenceRetainMs,
      bufferOf(args.value),
      lock.events,
      this.publish,
      this.writer.floors(lock.keys[0]),
      // Only when set: a claim without a lock-delay sends nothing more (the message path's cost).
      ...(args.lockDelayMs ? [args.lockDelayMs] : []),
    ];
  }

  /** acquire-set.lua's ARGV; `locks` are the key sets of `args.locks`, in order. */
  acquireSet(args: AcquireSetArgs, locks: LockKeySet[]): ScriptArg[] {
    const head = [args.sessionId, args.owner, args.requestId, args.ttlMs, args.mayWait ? 1 : 0, this.coordinatorId];
    const shared = [this.fenceRetainMs, bufferOf(args.value), this.publish, this.writer.floors(locks[0].keys[0])];
    const names = args.locks.map((l) => l.name).join("\n");
    const each = args.locks.flatMap((l, i) => [l.mode === "exclusive" ? 1 : 2, l.limit, locks[i].events]);
    // Only when some hold gets a lock-delay: a set without one sends nothing more.
    const delays = args.locks.some((l) => l.lockDelayMs) ? args.locks.map((l) => l.lockDelayMs ?? 0) : [];
    return [...head, ...shared, names, ...each, ...delays];
  }

  /** release.lua's ARGV: a release (`one`, `all`) or a withdrawal (`cancel`, `abandon`). */
  release(claim: Claim, how: "one" | "all" | "cancel" | "abandon"): ScriptArg[] {
    return [claim.sessionId, claim.owner, claim.requestId, how, ...this.grants(claim.name)];
  }

  /** release-token.lua's ARGV: drops each hold of (session, owner) on `name` only while it has that fencing token. */
  releaseTokens(name: string, holds: { sessionId: string; owner: string; token: bigint }[]): ScriptArg[] {
    return [...this.grants(name), ...holds.flatMap((h) => [h.sessionId, h.owner, String(h.token)])];
  }

  /** check.lua's ARGV: the grant arguments, then a (queue entry, holder) pair per waiter. */
  check(name: string, waiters: Claim[]): ScriptArg[] {
    const pairs = waiters.flatMap((w) => [`${w.sessionId}:${w.requestId}`, `${w.sessionId}:${w.owner}`]);
    return [...this.grants(name), ...pairs];
  }

  /** renew.lua's ARGV: per lock, its holder and waiter counts, holder owners, then a (request id, owner) pair per waiter. */
  renew(sessionId: string, ttlMs: number, locks: readonly RenewLock[]): ScriptArg[] {
    const args: ScriptArg[] = [sessionId, ttlMs, this.fenceRetainMs];
    for (const { owners, waiters } of locks) {
      args.push(owners.length, waiters.length, ...owners);
      for (const w of waiters) args.push(w.requestId, w.owner);
    }
    return args;
  }

  /** revoke.lua's ARGV. */
  revoke(hold: Omit<Claim, "requestId">): ScriptArg[] {
    return [hold.sessionId, hold.owner, ...this.grants(hold.name), revocationChannel(this.prefix)];
  }

  /** proclaim.lua's ARGV; `lock` is the key set of `hold.name`. */
  proclaim(hold: Omit<Claim, "requestId">, value: Uint8Array, lock: LockKeySet): ScriptArg[] {
    const floors = this.writer.floors(lock.keys[0]);
    return [hold.sessionId, hold.owner, bufferOf(value), lock.events, this.publish, this.fenceRetainMs, floors];
  }

  /** The arguments every script that may grant takes (release.lua's from the coordinator id on). */
  private grants(name: string): string[] {
    // With acks, other coordinators' grants come back unpublished, to go out once acknowledged.
    const grants = this.writer.confirming ? "" : grantChannel(this.prefix, "");
    const { keys, events } = this.lockKeys.of(name);
    const floors = this.writer.floors(keys[0]);
    return [this.coordinatorId, String(this.fenceRetainMs), name, grants, events, this.publish, floors];
  }
}

function bufferOf(value: Uint8Array | undefined): Buffer {
  return value ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : Buffer.alloc(0);
}
