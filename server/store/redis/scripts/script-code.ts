import type {
  AcquireOutcome,
  AcquireSetOutcome,
  CheckOutcome,
  ReleaseOutcome,
  RenewOutcome,
  RevokeOutcome,
  WaiterStatus,
} from "../../store.js";

/**
 * The return codes of every script, mirroring their headers: acquire.lua (1–5), acquire-set.lua (1–4, 6),
 * release.lua (11–15), revoke.lua (21–23), proclaim.lua (31–32), release-token.lua (41–42) lead their
 * replies; check.lua answers a status per waiter and renew.lua one per hold and per waiter, so theirs
 * repeat values of others (read per script, never mixed). describe.lua answers data only, no code.
 */
export enum ScriptCode {
  // acquire.lua: {code, ...}
  Granted = 1,
  Queued = 2,
  Busy = 3,
  Conflict = 4,
  Upgrade = 5,
  // acquire-set.lua: {code, ...} as acquire.lua's codes (1–4), and
  SetHeld = 6,
  // release.lua: {code, holds left, grants}
  Released = 11,
  NotHeld = 12,
  Withdrawn = 13,
  GrantReleased = 14,
  Gone = 15,
  // revoke.lua: {code, token, count, grants}
  Revoked = 21,
  RevokeNotHeld = 22,
  RevokeInvalidSession = 23,
  // proclaim.lua: {code}
  Proclaimed = 31,
  ProclaimNotHeld = 32,
  // release-token.lua: {code, holds dropped, grants}
  TokenDropped = 41,
  TokenNotHeld = 42,
  // check.lua: {ms or CheckNoHolder, grants, statuses}; a status is CheckQueued, CheckGone or a token
  CheckNoHolder = -1,
  CheckQueued = "q",
  CheckGone = "",
  // renew.lua: per hold "token count" or RenewGone (lost), then per waiter RenewGone (expired or never
  // queued), RenewQueued (renewed) or RenewGranted (granted meanwhile: its hold was renewed instead)
  RenewGone = 0,
  // biome-ignore lint/suspicious/noDuplicateEnumValues: renew.lua's codes are read only in its reply, never mixed with acquire's
  RenewQueued = 1,
  RenewGranted = 2,
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

/** Translates an acquire-set.lua reply (name indexes 1-based in Lua, 0-based here); an unknown code throws. */
export function translateSet(reply: ScriptReply): AcquireSetOutcome {
  const [code, a, b, c] = reply;
  const index = Number(a) - 1;
  switch (code as ScriptCode) {
    case ScriptCode.Granted:
      return { kind: "granted", tokens: (a as string[]).map((t) => BigInt(t)) };
    case ScriptCode.Queued:
      return { kind: "queued", index, position: Number(b), recheckInMs: Number(c) };
    case ScriptCode.Busy:
      return { kind: "busy", index };
    case ScriptCode.Conflict:
      return { kind: "conflict", index, limitInForce: Number(b) };
    case ScriptCode.SetHeld:
      return { kind: "held", index };
    default:
      throw new Error(`unknown acquire-set.lua return code ${code}`);
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

/** Translates a check.lua reply (`{ms, grants, statuses}`) into the store's outcome; the grants are the caller's. */
export function translateCheck(reply: [number, string[], string[]]): CheckOutcome {
  const statuses = reply[2].map((s): WaiterStatus => {
    if (s === ScriptCode.CheckQueued) return { kind: "queued" };
    return s === ScriptCode.CheckGone ? { kind: "gone" } : { kind: "granted", token: BigInt(s) };
  });
  return { statuses, recheckInMs: Number(reply[0]) };
}

/**
 * Translates a renew.lua reply into one outcome per lock of `locks` (in the order they were sent): per
 * lock, its owners' "token count" strings (RenewGone: lost), then one code per waiter. An unknown waiter
 * code throws.
 */
export function translateRenew(
  reply: (string | number)[],
  locks: readonly { owners: readonly unknown[]; waiters: readonly unknown[] }[],
): RenewOutcome[] {
  // Read in place, one entry after the other: a keepalive renews every lock of its session.
  let at = 0;
  return locks.map(({ owners, waiters }) => {
    const holds: RenewOutcome["holds"] = new Array(owners.length);
    for (let i = 0; i < owners.length; i++) holds[i] = renewedHold(reply[at++]);
    const waiting: RenewOutcome["waiters"] = new Array(waiters.length);
    for (let i = 0; i < waiters.length; i++) waiting[i] = waiterStatus(reply[at++]);
    return { holds, waiters: waiting };
  });
}

/** One owner's entry of renew.lua's reply: "token count" of the renewed hold, or 0 (not held). */
function renewedHold(r: string | number): RenewOutcome["holds"][number] {
  if (typeof r !== "string") return null;
  const space = r.indexOf(" ");
  return { token: BigInt(r.slice(0, space)), count: Number(r.slice(space + 1)) };
}

/** One (request, owner) pair's entry of renew.lua's reply. */
function waiterStatus(c: string | number): RenewOutcome["waiters"][number] {
  switch (Number(c)) {
    case ScriptCode.RenewQueued:
      return "queued";
    case ScriptCode.RenewGranted:
      return "granted";
    case ScriptCode.RenewGone:
      return "gone";
    default:
      throw new Error(`unknown renew.lua waiter code ${c}`);
  }
}
