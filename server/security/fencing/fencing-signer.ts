import { sign } from "node:crypto";
import type { SigningKey } from "./fencing-keys.js";

/** Who a proof was issued to, as the coordinator knows the holder. */
export interface ProofHolder {
  /** The caller identity from mTLS or a bearer token ("" when security is off). */
  caller: string;
  /** The session's Open.client_name. */
  client: string;
  session: string;
  owner: string;
}

/** The claims of one fencing proof (docs/fencing.md). */
export interface FencingClaims extends ProofHolder {
  iss: string;
  iat: number;
  lock: string;
  /** The fencing token as a decimal string (it may exceed 2^53). */
  fence: string;
}

/**
 * Signs fencing proofs: compact JWS (RFC 7515), `alg` EdDSA with an Ed25519 key (RFC 8037), the
 * signing key's `kid` in the header and the claims as a JWT payload, so stock JOSE libraries verify
 * it. One Ed25519 signature per grant; the header is encoded once.
 */
export class FencingSigner {
  private readonly header: string;

  constructor(
    private readonly key: SigningKey,
    readonly issuer = "turnstile",
    private readonly nowMs: () => number = Date.now,
  ) {
    this.header = b64(JSON.stringify({ alg: "EdDSA", kid: key.kid, typ: "JWT" }));
  }

  /** The proof that `holder` holds `lock` with `token`. */
  sign(lock: string, token: bigint, holder: ProofHolder): string {
    const input = this.signingInput(lock, token, holder);
    return `${input}.${sign(null, Buffer.from(input), this.key.privateKey).toString("base64url")}`;
  }

  /**
   * The same proof, signed on libuv's thread pool (node:crypto's callback form): the Ed25519
   * signature, about 50 µs of CPU, leaves the event loop free for other sessions meanwhile.
   * `done` gets the proof, or the error signing raised.
   */
  signLater(lock: string, token: bigint, holder: ProofHolder, done: (err: Error | null, proof: string) => void): void {
    const input = this.signingInput(lock, token, holder);
    sign(null, Buffer.from(input), this.key.privateKey, (err, signature) => {
      if (err) done(err, "");
      else done(null, `${input}.${signature.toString("base64url")}`);
    });
  }

  /** The JWS signing input: the encoded header and claims, joined by a dot. */
  private signingInput(lock: string, token: bigint, holder: ProofHolder): string {
    const claims: FencingClaims = {
      iss: this.issuer,
      iat: Math.floor(this.nowMs() / 1000),
      lock,
      fence: token.toString(),
      caller: holder.caller,
      client: holder.client,
      session: holder.session,
      owner: holder.owner,
    };
    return `${this.header}.${b64(JSON.stringify(claims))}`;
  }
}

function b64(text: string): string {
  return Buffer.from(text).toString("base64url");
}
