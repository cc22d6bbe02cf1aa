import type { TransferArgs, TransferOutcome, WaitingClaim } from "../../store.js";
import { splitId } from "../records/holder-id.js";
import type { ScriptArg } from "./runner/lock-scripts.js";
import { grantArgs, type ScriptContext } from "./script-context.js";

/** transfer.lua's return codes, the first element of its reply `{code, grants, ...}` (its contract header). */
export enum TransferCode {
  /** {51, grants, token, waiter, successor holder}: the successor holds. */
  Transferred = 51,
  /** {52, grants}: the (session, owner) holds no live lease on the lock. */
  NotHeld = 52,
  /** {53, grants}: the hold is shared. */
  Shared = 53,
  /** {54, grants}: the successor waits as an acquire-set member. */
  InSet = 54,
  /** {55, grants, {holder, waiter, ...}}: the successor does not wait; the first 10 who do. */
  NotWaiting = 55,
}

/** transfer.lua's ARGV. */
export function transferArgs(context: ScriptContext, t: TransferArgs): ScriptArg[] {
  return [t.sessionId, t.owner, t.token.toString(), t.toSessionId, t.toOwner, ...grantArgs(context, t.name)];
}

/** A waiter as transfer.lua names it: its holder id "session:owner" and waiter id "session:request". */
function waitingClaim(holder: string, waiter: string): WaitingClaim {
  const { sessionId, owner } = splitId(holder);
  return { sessionId, owner, requestId: splitId(waiter).owner };
}

/** Translates transfer.lua's reply into the store's outcome; an unknown code throws. */
export function translateTransfer(reply: unknown[]): TransferOutcome {
  const [code, , a, b, c] = reply;
  switch (code as TransferCode) {
    case TransferCode.Transferred:
      return { kind: "transferred", token: BigInt(String(a)), to: waitingClaim(String(c), String(b)) };
    case TransferCode.NotHeld:
      return { kind: "not-held" };
    case TransferCode.Shared:
      return { kind: "shared" };
    case TransferCode.InSet:
      return { kind: "in-set" };
    case TransferCode.NotWaiting: {
      const flat = (a as unknown[]).map(String);
      const waiting: WaitingClaim[] = [];
      for (let i = 0; i < flat.length; i += 2) waiting.push(waitingClaim(flat[i], flat[i + 1]));
      return { kind: "not-waiting", waiting };
    }
    default:
      throw new Error(`unknown transfer.lua return code ${code}`);
  }
}

/** The grants of a transfer.lua reply ("waiter, token" pairs), for the outbox. */
export function transferGrants(reply: unknown[]): string[] {
  return reply[1] as string[];
}

/** Sends transfer.lua on the lock's 6 keys, acknowledged; its reply is translateTransfer's and transferGrants'. */
export function sendTransfer(context: ScriptContext, t: TransferArgs): Promise<unknown> {
  return context.run("transfer", context.lockKeys.of(t.name).keys, transferArgs(context, t), t.name, transferGrants);
}
