import type { HolderState, LockState, WaiterState } from "../../store.js";
import { modeOf, splitId } from "../records/holder-id.js";
import { priorityOf } from "./acquire.js";
import type { ScriptContext } from "./script-context.js";

/**
 * describe.lua answers data only, no code; its one sentinel value is the delay's: `{..., delay}` is
 * NoDelay when no lock-delay is in force.
 */
export enum DescribeCode {
  NoDelay = -1,
}

/**
 * Parses describe.lua's reply (bulk strings as Buffers): `{version, limit or '', holders, waiters, delay}`
 * with holders as `holder, "token count mode waiter", lease ms, value, ms held, release request`, waiters as
 * `waiter, "coord mode limit owner", lease ms, ms waited, set names, queue score` and delay the ms left of the lock-delay
 * in force (DescribeCode.NoDelay: none). Holders come back in grant order.
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
  for (let i = 0; i < flatHolders.length; i += 6) {
    const [token, count, mode] = String(flatHolders[i + 1]).split(" ");
    const [requester, ...reason] = String(flatHolders[i + 5]).split("\n");
    holders.push({
      ...splitId(String(flatHolders[i])),
      token: BigInt(token),
      count: Number(count),
      mode: modeOf(mode),
      value: new Uint8Array(flatHolders[i + 3] as Buffer),
      leaseMs: Number(flatHolders[i + 2]),
      heldMs: Number(flatHolders[i + 4]),
      ...(reason.length > 0 && { releaseRequest: { requester, reason: reason.join("\n") } }),
    });
  }
  holders.sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
  const waiters: WaiterState[] = [];
  for (let i = 0; i < flatWaiters.length; i += 6) {
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
      mode: modeOf(mode),
      leaseMs,
      waitedMs: Number(flatWaiters[i + 3]),
      priority: priorityOf(Number(String(flatWaiters[i + 5]))),
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
 * RedisStore.describe: describe.lua on the lock's holders, data, queue, leases and version keys, through
 * the writer: with acks, after a WAIT covers the writes before it (a release retry trusts a "gone" read here).
 */
export async function runDescribe(context: ScriptContext, name: string): Promise<LockState> {
  const [holders, data, queue, leases, , version] = context.lockKeys.of(name).keys;
  const keys = [holders, data, queue, leases, version];
  return parseLockState(name, await context.writer.write(holders, (on) => on.scripts.runBuffer("describe", keys, [])));
}
