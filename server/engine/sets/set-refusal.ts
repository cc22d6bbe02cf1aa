import type { AcquireSetOutcome, Store } from "../../store/store.js";
import type { LockLimits } from "../lock-limits.js";
import type { ValidAcquireAll } from "../lock-requests.js";
import { ServerError } from "../server-error.js";
import type { PendingSet } from "../sessions/session.js";
import { holdKey, type Session } from "../sessions/session.js";
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
        `and "${b}" in slot ${sb}: give the names one hash tag, e.g. "{orders}/a" and "{orders}/b" (docs/multi-lock.md)`;
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

/**
 * Throws the ServerError an AcquireAll is refused with before it reaches the store, as
 * checkAcquirePreconditions does for one Acquire: its request id in flight, an earlier claim of one of
 * its names by the owner still being resolved, the session's lock limit (every name counts), the owner
 * already holding or waiting for one of its names (a set takes only names it neither holds nor waits for).
 */
export function checkSetPreconditions(session: Session, a: ValidAcquireAll, limits: LockLimits): void {
  if (session.inFlight(a.requestId)) {
    throw new ServerError("duplicate-request", `acquire_all.request_id: "${a.requestId}" is already in flight`);
  }
  if (session.lockCount + a.locks.length > limits.maxLocksPerSession) {
    throw new ServerError(
      "limit",
      `session: at most ${limits.maxLocksPerSession} locks held or pending per session (this set names ${a.locks.length})`,
    );
  }
  a.locks.forEach(({ name }, i) => {
    const field = `acquire_all.locks[${i}].name`;
    if (session.inDoubt(holdKey(name, a.owner))) {
      throw new ServerError(
        "unavailable",
        `${field}: an earlier claim of "${name}" by owner "${a.owner}" is still being resolved with the store; nothing was changed, retry later`,
      );
    }
    if (session.held.has(holdKey(name, a.owner))) {
      throw new ServerError(
        "conflict",
        `${field}: owner "${a.owner}" already holds "${name}" in this session (a set takes only names it does not hold)`,
      );
    }
    const waiting =
      [...session.pending.values()].find((p) => p.name === name && p.owner === a.owner)?.requestId ??
      [...session.pendingSets.values()].find((s) => s.owner === a.owner && s.locks.some((l) => l.name === name))
        ?.requestId;
    if (waiting !== undefined) {
      throw new ServerError(
        "conflict",
        `${field}: owner "${a.owner}" already waits for "${name}" (request "${waiting}")`,
      );
    }
  });
}
