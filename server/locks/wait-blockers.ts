import { ServerError } from "../rpc/server-error.js";
import type { Pending } from "../session/session.js";
import { nameSessions } from "../session/session-names.js";
import { SessionReplies as reply } from "../session/session-replies.js";
import type { HolderState, Store } from "../store/store.js";
import { queueBlockers } from "./queue-blockers.js";

/**
 * The holders of `name` now, with their client names: whom a timed-out acquire waited behind.
 * Empty when the store cannot be read (the TIMEOUT answer goes out without them).
 */
export async function waitBlockers(
  store: Pick<Store, "describe" | "loadSession">,
  name: string,
): Promise<HolderState[]> {
  try {
    return queueBlockers(await nameSessions(store, await store.describe(name)));
  } catch {
    return [];
  }
}

/** The TIMEOUT error of an acquire whose `waitMs` ran out behind `blockers`, naming them in words. */
function timeoutError(waitMs: number, blockers: HolderState[]): ServerError {
  const behind = blockers.map((b) => `"${b.owner}" of session ${b.sessionId} (held ${b.heldMs ?? 0} ms)`);
  const why = `acquire.wait: ${waitMs} ms ran out${behind.length ? `; waited behind ${behind.join(", ")}` : ""}`;
  return new ServerError("timeout", why);
}

/**
 * Answers the TIMEOUT of `p`, withdrawn already, naming the holders it waited behind: read after the
 * withdrawal was issued, so no grant can race the answer; without them if they cannot be read.
 */
export function answerTimeout(store: Pick<Store, "describe" | "loadSession">, p: Pending, waitMs: number): void {
  void waitBlockers(store, p.name).then((blockers) =>
    p.session.send(reply.failed(p.requestId, p.name, timeoutError(waitMs, blockers), blockers)),
  );
}
