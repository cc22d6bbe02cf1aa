import { TurnstileError } from "../turnstile-error.js";

/** Why a fencing proof or a guarded write was refused: a closed set. */
export type FencingRefusal =
  /** Not a compact JWS with EdDSA, a `kid` and the claims of a Turnstile proof. */
  | "malformed"
  /** The signature does not verify with the key its `kid` names. */
  | "bad-signature"
  /** No published key has the proof's `kid` (after refreshing the key set, when it is fetched). */
  | "unknown-kid"
  /** A valid proof, but for another lock name than the one the resource expects. */
  | "wrong-lock"
  /** A valid proof, but from another issuer than the one expected. */
  | "wrong-issuer"
  /** A valid proof whose fence is lower than the highest the resource has seen: its holder was superseded. */
  | "stale";

/**
 * A fencing proof refused by `verifyFencingProof` or a guard; `refusal` says why. It is a
 * TurnstileError with reason "fencing", so one catch handles every client error.
 */
export class FencingProofError extends TurnstileError {
  readonly refusal: FencingRefusal;

  constructor(refusal: FencingRefusal, message: string, options?: { cause?: unknown }) {
    super("fencing", `fencing proof refused (${refusal}): ${message}`, options);
    this.name = "FencingProofError";
    this.refusal = refusal;
  }
}
