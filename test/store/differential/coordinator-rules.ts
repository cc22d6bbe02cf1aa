import type { LockState } from "../../../server/store/store.js";
import type { StoreOperation } from "./store-operation.js";

/**
 * Why a coordinator would never send `o` to its store, or undefined when it would. The stores are
 * only held to agree on what a coordinator sends, and a coordinator lets one acquire of a (session,
 * owner, name) be pending at a time (docs/data-model.md, *Re-run re-entries*): a second, while the
 * first is queued, is answered CONFLICT without reaching the store. A re-run of the queued request
 * itself (same request id) does reach it. `states` are the locks as described after the last step.
 */
export function refusedByCoordinator(o: StoreOperation, states: ReadonlyMap<string, LockState>): string | undefined {
  if (o.op !== "acquire" && o.op !== "acquireSet") return undefined;
  const [sessionId, owner, requestId] = o.claim;
  for (const name of o.op === "acquire" ? [o.name] : o.names) {
    const pending = states
      .get(name)
      ?.waiters.find((w) => w.sessionId === sessionId && w.owner === owner && w.requestId !== requestId);
    if (pending) return `refused: ${sessionId}/${owner} already waits for ${name} (${pending.requestId})`;
  }
  return undefined;
}
