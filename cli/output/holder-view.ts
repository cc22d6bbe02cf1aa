import { type Holder, LockMode } from "../../gen/ts/turnstile/v1/turnstile.js";
import { msFromDuration } from "../../wire/duration.js";

/** A holder as the CLI prints it; `holder` is the SESSION_ID/OWNER that `turnstile revoke` takes. */
export interface HolderView {
  holder: string;
  sessionId: string;
  owner: string;
  /** Who opened the holder's session (client certificate or token); "" when the server does not say. */
  identity: string;
  /** uint64 as a decimal string (the protobuf JSON convention). */
  fencingToken: string;
  holdCount: number;
  mode: string;
  leaseRemainingMs: number;
  /** How long it has held the lock (null in Watch events, which do not carry it). */
  heldForMs: number | null;
  clientName: string;
  /** The value as UTF-8 text, or null when it is not valid UTF-8 (see valueBase64). */
  value: string | null;
  valueBase64: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The JSON-ready view of one holder (Describe, Watch). */
export function holderView(holder: Holder): HolderView {
  let value: string | null;
  try {
    value = utf8.decode(holder.value);
  } catch {
    value = null;
  }
  return {
    holder: `${holder.sessionId}/${holder.owner}`,
    sessionId: holder.sessionId,
    owner: holder.owner,
    identity: holder.identity,
    fencingToken: String(holder.fencingToken),
    holdCount: holder.holdCount,
    mode: modeName(holder.mode),
    leaseRemainingMs: Math.round(holder.leaseRemaining ? msFromDuration(holder.leaseRemaining) : 0),
    heldForMs: holder.heldFor ? Math.round(msFromDuration(holder.heldFor)) : null,
    clientName: holder.clientName,
    value,
    valueBase64: Buffer.from(holder.value).toString("base64"),
  };
}

/** A holder's value for a table cell: JSON-quoted text, or base64:... when not UTF-8. */
export function valueCell(view: HolderView): string {
  return view.value === null ? `base64:${view.valueBase64}` : JSON.stringify(view.value);
}

/** "exclusive", "shared", or "free" when nobody holds the lock (UNSPECIFIED), in tables and JSON alike. */
export function modeName(mode: LockMode): string {
  if (mode === LockMode.LOCK_MODE_EXCLUSIVE) return "exclusive";
  if (mode === LockMode.LOCK_MODE_SHARED) return "shared";
  return "free";
}
