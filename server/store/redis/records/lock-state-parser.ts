import type {
  HolderChange,
  HolderState,
  LockEvent,
  LockState,
  Revocation,
  StoreMode,
  WaiterState,
} from "../../store.js";

// 3 and 4: an acquire-set member's queue entry (docs/data-model.md).
const MODES: Record<string, StoreMode> = { "1": "exclusive", "2": "shared", "3": "exclusive", "4": "shared" };
const CHANGES = new Set<string>(["acquired", "released", "expired", "revoked", "value"]);

/**
 * Parses describe.lua's reply (bulk strings as Buffers): `{version, limit or '', holders, waiters, delay}`
 * with holders as `holder, "token count mode waiter", lease ms, value, ms held`, waiters as
 * `waiter, "coord mode limit owner", lease ms, ms waited, set names` and delay the ms left of the lock-delay
 * in force (-1: none). Holders come back in grant order.
 */
export function parseLockState(name: string, reply: unknown): LockState {
  const [version, limit, flatHolders, flatWaiters, delay] = reply as [
    Buffer,
    Buffer,
    (Buffer | number)[],
    (Buffer | number)[],
    number,
  ];
  const holders: HolderState[] = [];
  for (let i = 0; i < flatHolders.length; i += 5) {
    const [token, count, mode] = String(flatHolders[i + 1]).split(" ");
    holders.push({
      ...splitId(String(flatHolders[i])),
      token: BigInt(token),
      count: Number(count),
      mode: MODES[mode],
      value: new Uint8Array(flatHolders[i + 3] as Buffer),
      leaseMs: Number(flatHolders[i + 2]),
      heldMs: Number(flatHolders[i + 4]),
    });
  }
  holders.sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
  const waiters: WaiterState[] = [];
  for (let i = 0; i < flatWaiters.length; i += 5) {
    const setNames = String(flatWaiters[i + 4]);
    // A waiter id is "session:request".
    const { sessionId, owner: requestId } = splitId(String(flatWaiters[i]));
    const [, mode, , ...owner] = String(flatWaiters[i + 1]).split(" ");
    const leaseMs = Number(flatWaiters[i + 2]);
    waiters.push({
      sessionId,
      owner: owner.join(" "),
      requestId,
      position: waiters.length + 1,
      mode: MODES[mode],
      leaseMs,
      waitedMs: Number(flatWaiters[i + 3]),
      ...(setNames !== "" && { setNames: setNames.split("\n") }),
    });
  }
  const limitText = String(limit);
  return {
    name,
    version: BigInt(String(version)),
    limit: limitText === "" ? undefined : Number(limitText),
    holders,
    waiters,
    ...(delay > 0 && { delayMs: delay }),
  };
}

/**
 * Parses one holder change as the scripts publish it:
 * `"version kind token count mode holders-left lease-ms\nholder\nvalue"`. The value comes last
 * because it is binary and may contain newlines; nothing before it can.
 */
export function parseLockEvent(name: string, message: Buffer): LockEvent {
  const first = message.indexOf(0x0a);
  const second = message.indexOf(0x0a, first + 1);
  const [version, change, token, count, mode, left, leaseMs] = message.subarray(0, first).toString().split(" ");
  if (!CHANGES.has(change)) throw new Error(`unknown holder change "${change}" on the events of "${name}"`);
  return {
    name,
    version: BigInt(version),
    change: change as HolderChange,
    holder: {
      ...splitId(message.subarray(first + 1, second).toString()),
      token: BigInt(token),
      count: Number(count),
      mode: MODES[mode],
      value: new Uint8Array(message.subarray(second + 1)),
      leaseMs: Math.max(0, Number(leaseMs)),
    },
    holdersLeft: Number(left),
  };
}

/** Parses a revocation broadcast by revoke.lua: `"session\nowner\ntoken\nname"`. */
export function parseRevocation(message: string): Revocation {
  const [sessionId, owner, token, ...name] = message.split("\n");
  return { name: name.join("\n"), sessionId, owner, token: BigInt(token) };
}

// Session ids are hex, so the first colon ends the session part of "session:owner".
function splitId(id: string): { sessionId: string; owner: string } {
  const colon = id.indexOf(":");
  return { sessionId: id.slice(0, colon), owner: id.slice(colon + 1) };
}
