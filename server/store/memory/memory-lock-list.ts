import { createHash } from "node:crypto";
import type { LockPage, LockSummary } from "../store.js";
import type { MemoryLock } from "./memory-lock.js";

/**
 * One List page over the embedded store's locks: names in sorted order after the one the page
 * token names, those with live holders or waiters only. The token carries the last name listed
 * and a digest of the prefix, so a token is refused for another prefix.
 */
export function listLocks(
  locks: ReadonlyMap<string, MemoryLock>,
  now: number,
  prefix: string,
  pageSize: number,
  pageToken: string,
): LockPage | "invalid-token" {
  const digest = createHash("sha256").update(prefix).digest("base64url").slice(0, 12);
  let after: string | undefined;
  if (pageToken !== "") {
    after = decode(pageToken, digest);
    // Tokens are not signed: a name outside the prefix was not issued for it.
    if (after === undefined || !after.startsWith(prefix)) return "invalid-token";
  }
  const names = [...locks.keys()].filter((n) => n.startsWith(prefix) && (after === undefined || n > after)).sort();
  const page: LockSummary[] = [];
  let last: string | undefined;
  for (const name of names) {
    if (page.length >= pageSize) break;
    last = name;
    const { limit, holders, waiters, delayMs } = locks.get(name)!.state(now);
    if (holders.length + waiters.length === 0 && !delayMs) continue;
    const summary = { name, mode: holders[0]?.mode, limit, holders: holders.length, waiters: waiters.length };
    page.push({ ...summary, ...(delayMs && { delayMs }) });
  }
  const more = last !== undefined && names[names.length - 1] !== last;
  return { locks: page, nextPageToken: more ? encode(last!, digest) : "" };
}

function encode(after: string, digest: string): string {
  return Buffer.from(JSON.stringify([after, digest])).toString("base64url");
}

function decode(token: string, digest: string): string | undefined {
  try {
    const [after, forPrefix] = JSON.parse(Buffer.from(token, "base64url").toString());
    return typeof after === "string" && forPrefix === digest ? after : undefined;
  } catch {
    return undefined;
  }
}
