import { ServerError } from "../engine/server-error.js";
import type { AccessPolicy, Right } from "./access-policy.js";
import { type CallerCredentials, callerIdentity } from "./caller-identity.js";
import type { TokenFile } from "./token-file.js";

/** Where the authorizer reads the tokens and the policy in force (both reloadable). */
export interface AuthorizerSources {
  /** Calls without an identity are refused (UNAUTHENTICATED). */
  requireIdentity: boolean;
  tokens?: () => TokenFile;
  /** Absent: every caller may do everything (no authorization). */
  policy?: () => AccessPolicy;
}

/**
 * Decides who a call is and what it may do. `authenticate` names the caller ("" when security is
 * off and nobody is named); `require` throws PERMISSION_DENIED naming the name and the identity.
 * With no policy every right is granted, so an open coordinator behaves exactly as before.
 */
export class Authorizer {
  /** No authentication, no authorization: today's open coordinator. */
  static readonly OPEN = new Authorizer({ requireIdentity: false });

  constructor(private readonly sources: AuthorizerSources) {}

  /** True when a policy decides what callers may do (List is then filtered, Describe names identities). */
  get enforcing(): boolean {
    return this.sources.requireIdentity || this.sources.policy !== undefined;
  }

  /** The caller's identity; throws UNAUTHENTICATED for a bad token, or for none when one is required. */
  authenticate(call: CallerCredentials): string {
    const caller = callerIdentity(call, this.sources.tokens?.());
    if (caller.kind === "bad-token") {
      throw new ServerError("unauthenticated", "authorization: the bearer token is not valid");
    }
    if (caller.kind === "identity") return caller.identity;
    if (this.sources.requireIdentity) {
      throw new ServerError(
        "unauthenticated",
        "authentication: no credentials (send a client certificate or an authorization: Bearer token)",
      );
    }
    return "";
  }

  /** The identity a bearer token names in the token file in force, or undefined (also without a token file). */
  identityOfToken(token: string): string | undefined {
    return this.sources.tokens?.().identityOf(token);
  }

  /** Throws PERMISSION_DENIED unless `identity` has `right` on `name`. */
  require(identity: string, right: Right, name: string): void {
    if (!this.may(identity, right, name)) {
      throw new ServerError(
        "permission-denied",
        `permission denied: identity "${identity}" has no ${right} grant on "${name}"`,
      );
    }
  }

  /** True when `identity` has `right` on `name`. */
  may(identity: string, right: Right, name: string): boolean {
    const policy = this.sources.policy?.();
    return policy === undefined || policy.allows(identity, right, name);
  }
}
