import type { AcquireOutcome, ReleaseOutcome, RenewOutcome, RevokeOutcome } from "../store.js";

/**
 * Return codes of acquire.lua (1–5), release.lua (11–15), revoke.lua (21–23) and proclaim.lua
 * (31–32); mirrors their headers.
 */
export enum ScriptCode {
  Granted = 1,
  Queued = 2,
  Busy = 3,
  Conflict = 4,
  Upgrade = 5,
  Released = 11,
  NotHeld = 12,
  Withdrawn = 13,
  GrantReleased = 14,
  Gone = 15,
  Revoked = 21,
  RevokeNotHeld = 22,
  RevokeInvalidSession = 23,
  Proclaimed = 31,
  ProclaimNotHeld = 32,
}

/** A raw script reply: a code followed by its values. */
export type ScriptReply = [number, ...unknown[]];

/**
 * Translates an acquire.lua or release.lua reply into the store's outcome type. An unknown code
 * throws: it means the script and this enum disagree, which is a bug, not a runtime condition.
 */
export function translateReply(reply: ScriptReply): AcquireOutcome | ReleaseOutcome {
  const [code, a, b] = reply;
  switch (code as ScriptCode) {
    case ScriptCode.Granted:
      return { kind: "granted", token: BigInt(String(a)), holdCount: Number(b) };
    case ScriptCode.Queued:
      return { kind: "queued", position: Number(a), recheckInMs: Number(b) };
    case ScriptCode.Busy:
      return { kind: "busy" };
    case ScriptCode.Conflict:
      return { kind: "conflict", limitInForce: Number(a) };
    case ScriptCode.Upgrade:
      return { kind: "upgrade" };
    case ScriptCode.Released:
      return { kind: "released", holdCount: Number(a) };
    case ScriptCode.NotHeld:
      return { kind: "not-held" };
    case ScriptCode.Withdrawn:
      return { kind: "withdrawn" };
    case ScriptCode.GrantReleased:
      return { kind: "grant-released" };
    case ScriptCode.Gone:
      return { kind: "gone" };
    default:
      throw new Error(`unknown script return code ${code}`);
  }
}

/** Translates a revoke.lua reply (`{code, token, count, granted}`); an unknown code throws. */
export function translateRevoke(reply: ScriptReply): RevokeOutcome {
  const [code, token, count] = reply;
  if (code === ScriptCode.Revoked) return { kind: "revoked", token: BigInt(String(token)), holdCount: Number(count) };
  if (code === ScriptCode.RevokeNotHeld) return { kind: "not-held" };
  // Unreachable through the API (the validator refuses such ids first): a bug if it happens.
  if (code === ScriptCode.RevokeInvalidSession) throw new Error("revoke.lua refused a session id containing ':'");
  throw new Error(`unknown revoke.lua return code ${code}`);
}

/** Translates a proclaim.lua reply; an unknown code throws. */
export function translateProclaim(reply: ScriptReply): "proclaimed" | "not-held" {
  if (reply[0] === ScriptCode.Proclaimed) return "proclaimed";
  if (reply[0] === ScriptCode.ProclaimNotHeld) return "not-held";
  throw new Error(`unknown proclaim.lua return code ${reply[0]}`);
}

/** Translates a renew.lua reply: `holders` "token count" strings (0: lost), then one code per waiter. */
export function translateRenew(reply: (string | number)[], holders: number): RenewOutcome {
  const holds = reply.slice(0, holders).map((r) => {
    if (typeof r !== "string") return null;
    const [token, count] = r.split(" ");
    return { token: BigInt(token), count: Number(count) };
  });
  const codes = reply.slice(holders).map(Number);
  return { holds, waiters: codes.map((c) => (c === 1 ? "queued" : c === 2 ? "granted" : "gone")) };
}
