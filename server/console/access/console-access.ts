import type { IncomingHttpHeaders } from "node:http";

/** What a console caller may do to a lock: see it (List, Describe, Watch) or revoke its holds. */
export type ConsoleRight = "read" | "admin";

/**
 * The console's access rules: who the caller is, and what they may do to which name. The console
 * applies them to every request (List filtered by `read`, the lock view and its stream by `read`,
 * Revoke by `admin`); the security module supplies the same rules the gRPC API uses.
 */
export interface ConsoleAccess {
  /** True when callers must authenticate: the page then asks for a token. */
  readonly required: boolean;
  /** The caller's identity from the request's headers (`Authorization: Bearer …`); undefined: not authenticated. */
  identify(headers: IncomingHttpHeaders): string | undefined;
  /** Whether `identity` has `right` on the lock `name`. */
  may(identity: string, right: ConsoleRight, name: string): boolean;
}

/**
 * Security off: everybody is "anonymous" and may do everything, as on the gRPC port today (which is
 * why `--http` is refused on a non-loopback address while this is in force).
 */
export const OPEN_ACCESS: ConsoleAccess = {
  required: false,
  identify: () => "anonymous",
  may: () => true,
};

/** The token of an `Authorization: Bearer <token>` header, or undefined when there is none. */
export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const match = /^Bearer +([\x21-\x7e]+) *$/.exec(headers.authorization ?? "");
  return match?.[1];
}
