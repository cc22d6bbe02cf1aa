import type { JSONWebKeySet, JWK } from "jose";
import { FencingProofError } from "./fencing-proof-error.js";
import type { JwksFetcher } from "./jwks-fetcher.js";

/** The claims of a verified fencing proof (docs/fencing.md). */
export interface FencingClaims {
  /** The lock name. */
  lock: string;
  /** The fencing token. */
  fence: bigint;
  /** The holder's caller identity from mTLS or a bearer token ("" when the coordinator has no security). */
  caller: string;
  /** The holder session's client name. */
  client: string;
  session: string;
  owner: string;
  /** Issued at, in seconds since the epoch. */
  iat: number;
  iss: string;
  /** The key that signed it. */
  kid: string;
}

/** What `verifyFencingProof` checks beyond the signature. */
export interface VerifyFencingProofOptions {
  /** The lock name the resource belongs to: a proof for another name is refused ("wrong-lock"). */
  lock?: string;
  /** The expected `iss` (a coordinator's `--fencing-issuer`); absent: any. */
  issuer?: string;
  signal?: AbortSignal;
}

/** The highest fencing token a coordinator issues: 2^64 - 1. */
const MAX_FENCE = 2n ** 64n - 1n;

/**
 * Verifies a fencing proof (a compact JWS, EdDSA with an Ed25519 key, `kid` header) against the
 * coordinators' published keys: a JWK Set, or a JwksFetcher, which is asked again once when the
 * `kid` is unknown (a key rotated in). Resolves with the claims; rejects with a FencingProofError
 * naming why: malformed, bad-signature, unknown-kid, wrong-lock, wrong-issuer. Uses `jose`, loaded
 * on first use (an application that never verifies never loads it).
 */
export async function verifyFencingProof(
  proof: string,
  keys: JSONWebKeySet | JwksFetcher,
  options: VerifyFencingProofOptions = {},
): Promise<FencingClaims> {
  const { decodeProtectedHeader, errors, importJWK, jwtVerify } = await import("jose");
  const kid = kidOf(proof, decodeProtectedHeader);
  const jwk = await keyFor(kid, keys, options.signal);
  let payload: Record<string, unknown>;
  try {
    const key = await importJWK(jwk, "EdDSA");
    ({ payload } = await jwtVerify(proof, key, { algorithms: ["EdDSA"] }));
  } catch (err) {
    if (err instanceof errors.JWSSignatureVerificationFailed)
      throw new FencingProofError("bad-signature", `the signature does not verify with key "${kid}"`, { cause: err });
    throw new FencingProofError("malformed", (err as Error).message, { cause: err });
  }
  const claims = claimsOf(payload, kid);
  if (options.issuer !== undefined && claims.iss !== options.issuer)
    throw new FencingProofError("wrong-issuer", `issued by "${claims.iss}", expected "${options.issuer}"`);
  if (options.lock !== undefined && claims.lock !== options.lock)
    throw new FencingProofError("wrong-lock", `a proof for lock "${claims.lock}", not "${options.lock}"`);
  return claims;
}

function kidOf(proof: string, decodeProtectedHeader: (token: string) => { alg?: unknown; kid?: unknown }): string {
  if (typeof proof !== "string" || proof.split(".").length !== 3)
    throw new FencingProofError("malformed", "not a compact JWS (three base64url parts separated by dots)");
  let header: { alg?: unknown; kid?: unknown };
  try {
    header = decodeProtectedHeader(proof);
  } catch (err) {
    throw new FencingProofError("malformed", `unreadable header: ${(err as Error).message}`, { cause: err });
  }
  if (header.alg !== "EdDSA")
    throw new FencingProofError("malformed", `alg ${JSON.stringify(header.alg)}, expected "EdDSA"`);
  if (typeof header.kid !== "string" || header.kid === "")
    throw new FencingProofError("malformed", "no kid in the header");
  return header.kid;
}

async function keyFor(kid: string, keys: JSONWebKeySet | JwksFetcher, signal?: AbortSignal): Promise<JWK> {
  const find = (set: JSONWebKeySet) => set.keys.find((k) => k.kid === kid && k.kty === "OKP" && k.crv === "Ed25519");
  const found = Array.isArray(keys.keys)
    ? find(keys as JSONWebKeySet)
    : (find(await (keys as JwksFetcher).keys({ signal })) ?? find(await (keys as JwksFetcher).refreshed({ signal })));
  if (found) return found;
  throw new FencingProofError("unknown-kid", `no published Ed25519 key has kid "${kid}"`);
}

function claimsOf(payload: Record<string, unknown>, kid: string): FencingClaims {
  const text = (key: string) => {
    const value = payload[key];
    if (typeof value !== "string") throw new FencingProofError("malformed", `claim "${key}" is not a string`);
    return value;
  };
  const fenceText = text("fence");
  if (!/^[1-9]\d{0,19}$/.test(fenceText) || BigInt(fenceText) > MAX_FENCE)
    throw new FencingProofError(
      "malformed",
      `claim "fence" is not a decimal token from 1 to 2^64-1: ${JSON.stringify(fenceText)}`,
    );
  if (typeof payload.iat !== "number") throw new FencingProofError("malformed", 'claim "iat" is not a number');
  return {
    lock: text("lock"),
    fence: BigInt(fenceText),
    caller: text("caller"),
    client: text("client"),
    session: text("session"),
    owner: text("owner"),
    iat: payload.iat,
    iss: text("iss"),
    kid,
  };
}
