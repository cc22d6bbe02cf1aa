import type { IncomingHttpHeaders } from "node:http";
import type { Authorizer } from "../../security/authorizer.js";
import { bearerToken, type ConsoleAccess, type ConsoleRight } from "./console-access.js";

/**
 * The console's access rules from the coordinator's own security settings: the caller is the
 * identity its `Authorization: Bearer` token has in the token file (`--token-file`), and what it
 * may do is what the policy (`--policy`) grants that identity, re-read on change and SIGHUP like
 * the gRPC port's. Client certificates identify gRPC callers only.
 */
export class PolicyAccess implements ConsoleAccess {
  readonly required = true;

  constructor(private readonly authorizer: Authorizer) {}

  identify(headers: IncomingHttpHeaders): string | undefined {
    const token = bearerToken(headers);
    return token === undefined ? undefined : this.authorizer.identityOfToken(token);
  }

  may(identity: string, right: ConsoleRight, name: string): boolean {
    return this.authorizer.may(identity, right, name);
  }
}
