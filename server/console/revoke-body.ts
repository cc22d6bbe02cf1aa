import type { IncomingMessage } from "node:http";
import { ServerError } from "../engine/server-error.js";

/** Largest revoke request body the console reads, in bytes. */
export const MAX_REVOKE_BODY_BYTES = 4096;

/** The hold a console revoke names. */
export interface RevokeBody {
  name: string;
  sessionId: string;
  owner: string;
}

/**
 * Reads and checks the JSON body `{name, sessionId, owner}` of `POST /api/revoke`: it must be sent
 * as application/json (which a cross-site form cannot do without the page's consent) and be at
 * most MAX_REVOKE_BODY_BYTES. Field limits are checked later by the request validator.
 */
export async function readRevokeBody(req: IncomingMessage): Promise<RevokeBody> {
  if (!/^application\/json(;|$)/.test(req.headers["content-type"] ?? "")) {
    throw new ServerError("invalid-argument", "revoke: send the body as content-type application/json");
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REVOKE_BODY_BYTES) {
      throw new ServerError("invalid-argument", `revoke: the body exceeds ${MAX_REVOKE_BODY_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  let text: string;
  try {
    // Strict: a lenient decode would turn distinct invalid names into one "\uFFFD" name.
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new ServerError("invalid-argument", "revoke: the body is not valid UTF-8");
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ServerError("invalid-argument", "revoke: the body is not JSON");
  }
  const { name, sessionId, owner } = (body ?? {}) as Record<string, unknown>;
  for (const [field, value] of Object.entries({ name, sessionId, owner })) {
    if (typeof value !== "string") throw new ServerError("invalid-argument", `revoke.${field}: must be a string`);
  }
  return { name, sessionId, owner } as RevokeBody;
}
