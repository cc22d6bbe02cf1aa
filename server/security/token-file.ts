import { createHash, timingSafeEqual } from "node:crypto";
import { SecurityFileError } from "./reloadable-file.js";

const LINE = /^(\S+)\s+(?:sha256:)?([0-9a-fA-F]{64})$/;

/**
 * The bearer tokens a coordinator accepts: one `IDENTITY SHA256-HEX` pair per line (`#` starts a
 * comment), where the hash is SHA-256 of the token, so the file never holds a token itself. Tokens
 * must be random (at least 128 bits, e.g. `openssl rand -base64 32`): a plain hash is then enough.
 */
export class TokenFile {
  private constructor(private readonly entries: { identity: string; hash: Buffer }[]) {}

  /** Parses the file's text; throws a SecurityFileError naming the line that is wrong. */
  static parse(text: string, path: string): TokenFile {
    const entries: { identity: string; hash: Buffer }[] = [];
    text.split("\n").forEach((raw, i) => {
      const line = raw.replace(/#.*/, "").trim();
      if (line === "") return;
      const match = LINE.exec(line);
      if (!match) {
        throw new SecurityFileError(
          `token file ${path}:${i + 1}: expected "IDENTITY SHA256-HEX" (the hash of the token, 64 hex digits)`,
        );
      }
      entries.push({ identity: match[1], hash: Buffer.from(match[2], "hex") });
    });
    return new TokenFile(entries);
  }

  /** How many tokens the file holds. */
  get size(): number {
    return this.entries.length;
  }

  /**
   * The identity of `token`, or undefined. Every entry is compared, in constant time each, so the
   * time taken says nothing about which hash (or how much of one) matched.
   */
  identityOf(token: string): string | undefined {
    const hash = createHash("sha256").update(token).digest();
    let found: string | undefined;
    for (const entry of this.entries)
      if (timingSafeEqual(hash, entry.hash) && found === undefined) found = entry.identity;
    return found;
  }
}

/** SHA-256 hex of a token: what a token file line holds for it. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
