import type { CredentialOptions } from "../../client/admin.js";
import type { Blocker } from "../../client/index.js";
import { msFromDuration } from "../../wire/duration.js";
import { AdminClient } from "../admin-client.js";
import { holderView } from "./holder-view.js";

/** One holder as `turnstile lock` names it: SESSION_ID/OWNER (what revoke takes), its client, identity and age. */
interface NamedHolder {
  sessionId: string;
  owner: string;
  clientName: string;
  identity: string;
  heldForMs: number | null;
}

function describeOne(h: NamedHolder): string {
  const details = [
    h.clientName && `client ${h.clientName}`,
    h.identity && `identity ${h.identity}`,
    h.heldForMs !== null &&
      `held for ${h.heldForMs < 1000 ? `${h.heldForMs}ms` : `${Math.round(h.heldForMs / 1000)}s`}`,
  ].filter(Boolean);
  return `${h.sessionId}/${h.owner}${details.length ? ` (${details.join(", ")})` : ""}`;
}

function delayText(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${Math.ceil(ms / 1000)}s`;
}

/** The holders a failed acquire waited behind (TurnstileError.blockedBy), for one line. */
export function blockersLine(blockers: readonly Blocker[]): string | undefined {
  if (blockers.length === 0) return undefined;
  return `held by ${blockers.map((b) => describeOne(b)).join("; ")}`;
}

/**
 * The current holders of `name`, read with one Describe on the same connection, for one line:
 * "held by SESSION_ID/OWNER (client …, held for …)"; names a lock-delay in force (nobody holds the lock,
 * yet nobody may take it); says so when nobody holds it any more or when they cannot be read (no read
 * grant, coordinator gone). The Describe ends by `callTimeoutMs` (default 10 s).
 */
export async function currentHoldersLine(
  server: string,
  connection: CredentialOptions,
  name: string,
  options: { callTimeoutMs?: number } = {},
): Promise<string> {
  const client = new AdminClient(server, connection, options);
  try {
    const lock = await client.describe(name);
    const delayMs = lock.delayRemaining ? Math.round(msFromDuration(lock.delayRemaining)) : 0;
    const delay =
      delayMs > 0 ? `a lock-delay is in force for ${delayText(delayMs)} more (a hold ended without a release)` : "";
    if (lock.holders.length === 0) return delay ? `nobody holds it, but ${delay}` : "nobody holds it now";
    const held = `held by ${lock.holders.map((h) => describeOne(holderView(h))).join("; ")}`;
    return delay ? `${held}; ${delay}` : held;
  } catch (err) {
    return `holders unknown: ${(err as Error).message}`;
  } finally {
    client.close();
  }
}
