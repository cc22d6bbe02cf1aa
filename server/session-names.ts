import type { LockState, Store } from "./store/store.js";

/**
 * Fills in `clientName` of every holder and waiter of `state` from the store's session records:
 * one read per distinct session, all at once; "" for a session whose record is gone. The store
 * itself cannot join them (on Redis Cluster a lock and a session live in different slots).
 */
export async function nameSessions(store: Pick<Store, "loadSession">, state: LockState): Promise<LockState> {
  const ids = new Set([...state.holders, ...state.waiters].map((e) => e.sessionId));
  const names = new Map<string, string>();
  await Promise.all(
    [...ids].map(async (id) => {
      names.set(id, (await store.loadSession(id))?.clientName ?? "");
    }),
  );
  return {
    ...state,
    holders: state.holders.map((h) => ({ ...h, clientName: names.get(h.sessionId) ?? "" })),
    waiters: state.waiters.map((w) => ({ ...w, clientName: names.get(w.sessionId) ?? "" })),
  };
}
