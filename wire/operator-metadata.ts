/**
 * The gRPC metadata key in which the `turnstile` CLI names the operator who runs it (`user@host`).
 * It is the operator's own claim, not an identity the coordinator verified: the coordinator logs it
 * beside a Revoke only when the call carries no verified identity (security off).
 */
export const OPERATOR_METADATA = "x-turnstile-operator";

/** Longest operator text the coordinator logs, in characters (the rest is cut). */
export const MAX_OPERATOR_CHARS = 100;
