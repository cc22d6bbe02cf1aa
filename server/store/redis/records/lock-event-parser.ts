import type { HolderChange, LockEvent, ReleaseRequested, Revocation } from "../../store.js";
import { modeOf, splitId } from "./holder-id.js";

const CHANGES = new Set<string>(["acquired", "released", "expired", "revoked", "value", "transferred"]);

/**
 * Parses one holder change as the scripts publish it (scripts/includes/event.lua):
 * `"version kind token count mode holders-left lease-ms\nholder\nvalue"`. The value comes last
 * because it is binary and may contain newlines; nothing before it can.
 */
export function parseLockEvent(name: string, message: Buffer): LockEvent {
  const first = message.indexOf(0x0a);
  const second = message.indexOf(0x0a, first + 1);
  const head = message.subarray(0, first).toString().split(" ");
  const [version, change, token, count, mode, left, leaseMs] = head;
  if (!CHANGES.has(change)) throw new Error(`unknown holder change "${change}" on the events of "${name}"`);
  let valueAt = second + 1;
  let from: LockEvent["from"];
  // A transfer: "... from-token from-count from-mode from-value-bytes\nholder\nfrom-id\nfrom-value value".
  if (change === "transferred") {
    const [fromToken, fromCount, fromMode, fromBytes] = head.slice(7);
    const third = message.indexOf(0x0a, second + 1);
    valueAt = third + 1 + Number(fromBytes);
    from = {
      ...splitId(message.subarray(second + 1, third).toString()),
      token: BigInt(fromToken),
      count: Number(fromCount),
      mode: modeOf(fromMode),
      value: new Uint8Array(message.subarray(third + 1, valueAt)),
      leaseMs: 0,
    };
  }
  return {
    name,
    version: BigInt(version),
    change: change as HolderChange,
    holder: {
      ...splitId(message.subarray(first + 1, second).toString()),
      token: BigInt(token),
      count: Number(count),
      mode: modeOf(mode),
      value: new Uint8Array(message.subarray(valueAt)),
      leaseMs: Math.max(0, Number(leaseMs)),
    },
    holdersLeft: Number(left),
    ...(from && { from }),
  };
}

/** Parses a revocation broadcast by revoke.lua: `"session\nowner\ntoken\nname"`. */
export function parseRevocation(message: string): Revocation {
  const [sessionId, owner, token, ...name] = message.split("\n");
  return { name: name.join("\n"), sessionId, owner, token: BigInt(token) };
}

/** Parses a release request broadcast by request-release.lua: `"holder\nname\nrequester\nreason"`. */
export function parseReleaseRequest(message: string): ReleaseRequested {
  const [holder, name, requester, ...reason] = message.split("\n");
  return { ...splitId(holder), name, requester, reason: reason.join("\n") };
}
