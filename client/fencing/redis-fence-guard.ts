import type { JSONWebKeySet } from "jose";
import { FENCE_WRITE_SCRIPT } from "./fence-write-script.js";
import { FencingProofError } from "./fencing-proof-error.js";
import type { JwksFetcher } from "./jwks-fetcher.js";
import { type FencingClaims, verifyFencingProof } from "./verify-fencing-proof.js";

/** The one Redis call the guard makes: ioredis's `eval` has this shape (wrap other clients). */
export interface RedisEval {
  eval(script: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
}

/** One guarded write: the resource key, its new value, and the lock name its proofs must name. */
export interface GuardedWrite {
  key: string;
  value: string | Buffer;
  /** The lock that guards `key`: a proof for another name is refused. */
  lock: string;
  signal?: AbortSignal;
}

/**
 * Guards a Redis key with fencing proofs: `write` verifies the proof in this process (Ed25519 with
 * the coordinators' keys: Lua cannot), then one script compares its fence with the highest fence
 * stored for the key (at `<key>:fence`), refuses a lower one and does the SET, in one step. A
 * refused write throws a FencingProofError (stale, bad-signature, unknown-kid, wrong-lock, ...)
 * and leaves the key and its fence as they were. On Redis Cluster give the key a hash tag
 * (`{orders}:total`) so that its fence key lives in the same slot.
 */
export class RedisFenceGuard {
  constructor(
    private readonly redis: RedisEval,
    private readonly keys: JSONWebKeySet | JwksFetcher,
    private readonly options: { issuer?: string } = {},
  ) {}

  /** The fence key of a resource key. */
  static fenceKey(key: string): string {
    return `${key}:fence`;
  }

  /** Verifies `proof`, then writes `value` to `key` unless a higher fence was stored; resolves with the claims. */
  async write(proof: string, write: GuardedWrite): Promise<FencingClaims> {
    const claims = await verifyFencingProof(proof, this.keys, {
      lock: write.lock,
      issuer: this.options.issuer,
      signal: write.signal,
    });
    const fence = claims.fence.toString();
    const reply = (await this.redis.eval(
      FENCE_WRITE_SCRIPT,
      2,
      write.key,
      RedisFenceGuard.fenceKey(write.key),
      fence,
      write.value as string,
    )) as [number, string | Buffer];
    if (Number(reply[0]) !== 1)
      throw new FencingProofError(
        "stale",
        `fence ${fence} of lock "${claims.lock}" is lower than ${String(reply[1])}, the highest "${write.key}" has seen`,
      );
    return claims;
  }
}
