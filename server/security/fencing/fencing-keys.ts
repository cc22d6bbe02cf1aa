import { createHash, createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";

/** One Ed25519 public key as RFC 7517 publishes it (an OKP key, RFC 8037). */
export interface FencingJwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  alg: "EdDSA";
  use: "sig";
}

/** A private key that signs proofs, and its `kid`. */
export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
}

/**
 * The fencing keys of `serve --fencing-key FILE ...`: the first signs every proof, every one is
 * published (the others are older keys kept while proofs they signed may still be checked). The
 * `kid` is the key's RFC 7638 thumbprint, so every coordinator sharing a key names it alike.
 */
export class FencingKeys {
  private constructor(
    readonly signing: SigningKey,
    readonly published: readonly FencingJwk[],
  ) {}

  /** Reads the PEM files; throws an Error naming the flag and the file on a bad or unreadable key. */
  static load(files: readonly string[]): FencingKeys {
    if (files.length === 0) throw new Error("fencing-key: no file given");
    const keys = files.map((file) => {
      let pem: string;
      try {
        pem = readFileSync(file, "utf8");
      } catch (err) {
        throw new Error(`fencing-key: cannot read ${file} (${(err as NodeJS.ErrnoException).code})`);
      }
      return FencingKeys.fromPem(pem, file);
    });
    const published = keys.map((k) => k.jwk).filter((k, i, all) => all.findIndex((o) => o.kid === k.kid) === i);
    return new FencingKeys({ kid: keys[0].jwk.kid, privateKey: keys[0].privateKey }, published);
  }

  /** One private key from PEM text; `where` names it in errors. */
  static fromPem(pem: string, where: string): { privateKey: KeyObject; jwk: FencingJwk } {
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey(pem);
    } catch {
      throw new Error(
        `fencing-key: ${where} is not a PEM private key (make one with: openssl genpkey -algorithm ed25519 -out ${where})`,
      );
    }
    if (privateKey.asymmetricKeyType !== "ed25519")
      throw new Error(`fencing-key: ${where} is a ${privateKey.asymmetricKeyType} key; an Ed25519 key is needed`);
    const { x } = createPublicKey(privateKey).export({ format: "jwk" }) as { x: string };
    return { privateKey, jwk: { kty: "OKP", crv: "Ed25519", x, kid: thumbprint(x), alg: "EdDSA", use: "sig" } };
  }

  /** The JWK Set document: `{"keys": [...]}`. */
  jwks(): { keys: FencingJwk[] } {
    return { keys: [...this.published] };
  }
}

/** RFC 7638 thumbprint of an Ed25519 OKP key: base64url SHA-256 of its required members in order. */
function thumbprint(x: string): string {
  return createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest("base64url");
}
