import type { AcquireSetOutcome, Store } from "../../store/store.js";
import { ServerError } from "../server-error.js";
import type { PendingSet } from "../sessions/session.js";
import { waitBlockers } from "../waits/wait-blockers.js";

/** The store's answers that refuse an AcquireAll outright. */
export type RefusedSet = Exclude<AcquireSetOutcome, { kind: "granted" | "queued" }>;

/** The Failed error of a refused set and the name it concerns, naming the field at fault. */
export function setRefusal(p: PendingSet, outcome: RefusedSet): { name: string; error: ServerError } {
  const index = outcome.kind === "cross-slot" ? outcome.indexes[1] : outcome.index;
  const name = p.locks[index].name;
  const field = `acquire_all.locks[${index}]`;
  switch (outcome.kind) {
    case "busy":
      return { name, error: new ServerError("busy", `acquire_all: "${name}" is held (wait was zero: tried once)`) };
    case "conflict":
      return {
        name,
        error: new ServerError(
          "conflict",
          `${field}.limit: ${p.locks[index].limit} differs from the SHARED limit ${outcome.limitInForce} in force on "${name}"`,
        ),
      };
    case "held":
      return {
        name,
        error: new ServerError(
          "conflict",
          `${field}.name: owner "${p.owner}" already holds "${name}" (a set takes only names it does not hold)`,
        ),
      };
    case "cross-slot": {
      const [a, b] = outcome.indexes.map((i) => p.locks[i].name);
      const [sa, sb] = outcome.slots;
      const why =
        `acquire_all.locks: on Redis Cluster every name of a set must hash to one slot, but "${a}" is in slot ${sa} ` +
        `and "${b}" in slot ${sb} (docs/multi-lock.md)`;
      return { name, error: new ServerError("invalid-argument", why) };
    }
  }
}

/**
 * The TIMEOUT failure of a set withdrawn after `waitMs` and the name it concerns: its evidence holds the
 * holders of every name of the set (each with the name it holds), read after the withdrawal; without
 * them where they cannot be read.
 */
export async function setTimeoutFailure(
  store: Pick<Store, "describe" | "loadSession">,
  p: PendingSet,
  waitMs: number,
): Promise<{ name: string; error: ServerError }> {
  const perName = await Promise.all(
    p.locks.map(async (l) => ({ name: l.name, ...(await waitBlockers(store, l.name)) })),
  );
  const busy = perName.filter((n) => n.blockers.length > 0 || n.delayMs !== undefined);
  const behind = busy.map((n) => {
    const who = n.blockers.map((h) => `"${h.owner}" of session ${h.sessionId}`);
    if (n.delayMs !== undefined) who.push(`a lock-delay (${n.delayMs} ms left)`);
    return `"${n.name}" (${who.join(", ")})`;
  });
  const why = `acquire_all.wait: ${waitMs} ms ran out${behind.length ? `; waited for ${behind.join(", ")}` : ""}`;
  const blockedBy = busy.flatMap((n) => n.blockers.map((holder) => ({ name: n.name, holder })));
  return { name: busy[0]?.name ?? "", error: new ServerError("timeout", why, { blockedBy }) };
}
