import type { JSONWebKeySet } from "jose";
import { FencingProofError } from "./fencing-proof-error.js";
import type { JwksFetcher } from "./jwks-fetcher.js";
import { type FencingClaims, verifyFencingProof } from "./verify-fencing-proof.js";

/** The one call the guard makes: `pg`'s Client and PoolClient have this shape. */
export interface SqlQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Where the fences are kept: a table of (resource, highest fence). */
export interface PostgresFenceGuardOptions {
  /** Default "turnstile_fences"; a plain or schema-qualified identifier. */
  table?: string;
  /** The expected `iss` of proofs; absent: any. */
  issuer?: string;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

/**
 * Guards PostgreSQL rows with fencing proofs, inside the caller's transaction: `check` verifies the
 * proof in this process, then one statement raises the resource's highest fence to the proof's, or
 * refuses a lower one (FencingProofError "stale"). The fence row stays locked until the caller's
 * transaction ends, so a stale writer waiting on it is refused once the newer one commits, and a
 * rollback undoes the raise with the caller's own writes. Call it first in the transaction, then
 * write.
 */
export class PostgresFenceGuard {
  private readonly table: string;

  constructor(
    private readonly keys: JSONWebKeySet | JwksFetcher,
    private readonly options: PostgresFenceGuardOptions = {},
  ) {
    this.table = options.table ?? "turnstile_fences";
    if (!IDENTIFIER.test(this.table))
      throw new TypeError(`PostgresFenceGuard: table ${JSON.stringify(this.table)} is not a plain identifier`);
  }

  /** Creates the fence table if it is missing: (resource text primary key, fence numeric(20), lock, updated). */
  async createTable(db: SqlQueryable): Promise<void> {
    await db.query(
      `CREATE TABLE IF NOT EXISTS ${this.table} (resource text PRIMARY KEY, fence numeric(20, 0) NOT NULL, lock text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`,
    );
  }

  /**
   * Inside the caller's open transaction on `tx`: verifies `proof` for `lock` and raises the fence
   * of `resource` to it, or throws FencingProofError (stale when a higher fence is stored).
   */
  async check(
    tx: SqlQueryable,
    proof: string,
    guarded: { resource: string; lock: string; signal?: AbortSignal },
  ): Promise<FencingClaims> {
    const claims = await verifyFencingProof(proof, this.keys, {
      lock: guarded.lock,
      issuer: this.options.issuer,
      signal: guarded.signal,
    });
    const fence = claims.fence.toString();
    const { rows } = await tx.query(
      `INSERT INTO ${this.table} AS f (resource, fence, lock) VALUES ($1, $2::numeric, $3)
       ON CONFLICT (resource) DO UPDATE SET fence = EXCLUDED.fence, lock = EXCLUDED.lock, updated_at = now()
       WHERE f.fence <= EXCLUDED.fence
       RETURNING fence::text`,
      [guarded.resource, fence, claims.lock],
    );
    if (rows.length === 0) {
      const highest = await tx.query(`SELECT fence::text AS fence FROM ${this.table} WHERE resource = $1`, [
        guarded.resource,
      ]);
      const seen = (highest.rows[0] as { fence?: string } | undefined)?.fence ?? "?";
      throw new FencingProofError(
        "stale",
        `fence ${fence} of lock "${claims.lock}" is lower than ${seen}, the highest "${guarded.resource}" has seen`,
      );
    }
    return claims;
  }
}
