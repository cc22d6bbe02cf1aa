import type { CredentialOptions } from "../../client/admin.js";
import type { Blocker } from "../../client/index.js";
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

/** The holders a failed acquire waited behind (TurnstileError.blockedBy), for one line. */
export function blockersLine(blockers: readonly Blocker[]): string | undefined {
  if (blockers.length === 0) return undefined;
  return `held by ${blockers.map((b) => describeOne(b)).join("; ")}`;
}

/**
 * The current holders of `name`, read with one Describe on the same connection, for one line:
 * "held by SESSION_ID/OWNER (client …, held for …)"; says so when nobody holds it any more or when they
 * cannot be read (no read grant, coordinator gone). The Describe ends by `callTimeoutMs` (default 10 s).
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
    if (lock.holders.length === 0) return "nobody holds it now";
    return `held by ${lock.holders.map((h) => describeOne(holderView(h))).join("; ")}`;
  } catch (err) {
    return `holders unknown: ${(err as Error).message}`;
  } finally {
    client.close();
  }
}
