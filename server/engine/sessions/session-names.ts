import type { LockState, Store } from "../../store/store.js";

/**
 * Fills in `clientName` and `identity` of every holder and waiter of `state` from the store's
 * session records: one read per distinct session, all at once; "" for a session whose record is
 * gone (and identity "" when security is off). The store itself cannot join them (on Redis Cluster a
 * lock and a session live in different slots).
 */
export async function nameSessions(store: Pick<Store, "loadSession">, state: LockState): Promise<LockState> {
  const ids = new Set([...state.holders, ...state.waiters].map((e) => e.sessionId));
  const names = new Map<string, { clientName: string; identity: string }>();
  await Promise.all(
    [...ids].map(async (id) => {
      const record = await store.loadSession(id);
      names.set(id, { clientName: record?.clientName ?? "", identity: record?.identity ?? "" });
    }),
  );
  const none = { clientName: "", identity: "" };
  return {
    ...state,
    holders: state.holders.map((h) => ({ ...h, ...(names.get(h.sessionId) ?? none) })),
    waiters: state.waiters.map((w) => ({ ...w, ...(names.get(w.sessionId) ?? none) })),
  };
}
