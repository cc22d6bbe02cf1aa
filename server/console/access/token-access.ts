import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { bearerToken, type ConsoleAccess, type ConsoleRight } from "./console-access.js";

/** One caller of a TokenAccess: its token, its identity and its rights on name prefixes. */
export interface TokenEntry {
  identity: string;
  token: string;
  /** `prefix` "" covers every name; "billing/" covers "billing/x" but not "billing-evil/x". */
  grants: { prefix: string; rights: ConsoleRight[] }[];
}

interface Known {
  identity: string;
  hash: Buffer;
  grants: TokenEntry["grants"];
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest();

/**
 * ConsoleAccess from a token → identity → per-prefix rights map, denying by default: the seam the
 * security module's token file and policy plug into (tests use it directly). Tokens are kept only
 * as SHA-256 hashes and compared in constant time; no right is implied by another.
 */
export class TokenAccess implements ConsoleAccess {
  readonly required = true;
  private readonly known: Known[];

  constructor(entries: readonly TokenEntry[]) {
    this.known = entries.map((e) => ({ identity: e.identity, hash: sha256(e.token), grants: e.grants }));
  }

  identify(headers: IncomingHttpHeaders): string | undefined {
    const token = bearerToken(headers);
    if (token === undefined) return undefined;
    const hash = sha256(token);
    let identity: string | undefined;
    // Every entry is compared, so the time taken does not tell which one matched.
    for (const k of this.known) if (timingSafeEqual(k.hash, hash)) identity ??= k.identity;
    return identity;
  }

  may(identity: string, right: ConsoleRight, name: string): boolean {
    return this.known.some(
      (k) => k.identity === identity && k.grants.some((g) => g.rights.includes(right) && name.startsWith(g.prefix)),
    );
  }
}
