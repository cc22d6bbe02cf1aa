import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { LockPage } from "../../store.js";
import { escapeName } from "./lock-keys.js";
import { lockSummaries, namesOf } from "./lock-summaries.js";

/** Longest page token accepted back; longer ones were not issued here. */
const MAX_TOKEN_CHARS = 16_384;
/** Largest SCAN cursor: Redis cursors are unsigned 64-bit integers. */
const MAX_CURSOR = 2n ** 64n - 1n;
/** Keys SCAN visits per call at least, so a rare prefix does not cost a round trip per few keys. */
const WIDE_COUNT = 1000;

/** What a page token carries: the SCAN cursor (null: the scan is done), names found but not yet listed. */
interface Position {
  cursor: string | null;
  pending: string[];
  /** A digest of the prefix the listing is for. */
  prefix: string;
}

/**
 * Pages through the active locks of one Redis with SCAN over the locks' data keys (`<prefix>:{<name>}:data`,
 * which exist exactly while a lock has holders or waiters, or a lock-delay in force). SCAN visits at
 * least 1000 keys per call; when that finds more names than the page still needs, the same cursor is scanned again
 * with COUNT set to what the page needs, which overshoots by at most a hash bucket's worth of names:
 * those ride along in the page token and open the next page. Every lock present for the whole
 * listing is listed at least once (SCAN's guarantee); names whose every lease has ended but that no
 * script has purged yet are left out.
 */
export class LockLister {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  async list(prefix: string, pageSize: number, pageToken: string): Promise<LockPage | "invalid-token"> {
    const digest = createHash("sha256").update(prefix).digest("base64url").slice(0, 12);
    const position = pageToken === "" ? { cursor: "0", pending: [], prefix: digest } : decode(pageToken);
    // Tokens are not signed: re-checking every name they carry against the prefix is what keeps
    // a forged token from answering a lock outside it.
    if (!position || position.prefix !== digest || !position.pending.every((n) => n.startsWith(prefix))) {
      return "invalid-token";
    }
    // `{<escaped prefix>…}:data`, or `{<tag>}<escaped prefix>…:data` for a name with a hash tag: one glob for
    // both, whose false matches (the prefix further in) the check of each name drops.
    const pattern = `${globEscape(this.keyPrefix)}:{*${globEscape(escapeName(prefix))}*:data`;
    const found: string[] = [];
    let { cursor, pending } = position;
    for (;;) {
      found.push(...pending.splice(0, pageSize - found.length));
      if (found.length >= pageSize || cursor === null) break;
      const need = pageSize - found.length;
      let [next, keys] = await this.redis.scan(cursor, "MATCH", pattern, "COUNT", Math.max(need, WIDE_COUNT));
      if (keys.length > need && need < WIDE_COUNT) {
        [next, keys] = await this.redis.scan(cursor, "MATCH", pattern, "COUNT", need);
      }
      pending = namesOf(this.keyPrefix, keys, prefix);
      cursor = next === "0" ? null : next;
    }
    const done = cursor === null && pending.length === 0;
    const nextPageToken = done ? "" : encode({ cursor, pending, prefix: digest });
    const [seconds, micros] = await this.redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    return { locks: await lockSummaries(this.redis, this.keyPrefix, found, () => now), nextPageToken };
  }
}

/** SCAN MATCH is a glob: these characters in a prefix must match themselves. */
export function globEscape(text: string): string {
  return text.replace(/[\\*?[\]]/g, (c) => `\\${c}`);
}

function encode(position: Position): string {
  return Buffer.from(JSON.stringify([position.cursor, position.pending, position.prefix])).toString("base64url");
}

function decode(token: string): Position | undefined {
  if (token.length > MAX_TOKEN_CHARS) return undefined;
  try {
    const [cursor, pending, prefix] = JSON.parse(Buffer.from(token, "base64url").toString());
    const cursorOk =
      cursor === null ||
      (typeof cursor === "string" && /^(0|[1-9]\d{0,19})$/.test(cursor) && BigInt(cursor) <= MAX_CURSOR);
    const pendingOk = Array.isArray(pending) && pending.every((n) => typeof n === "string");
    return cursorOk && pendingOk && typeof prefix === "string" ? { cursor, pending, prefix } : undefined;
  } catch {
    return undefined;
  }
}
