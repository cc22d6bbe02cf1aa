import type { HolderChange, LockEvent, Revocation } from "../../store.js";
import { modeOf, splitId } from "./holder-id.js";

const CHANGES = new Set<string>(["acquired", "released", "expired", "revoked", "value"]);

/**
 * Parses one holder change as the scripts publish it (scripts/includes/event.lua):
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
      mode: modeOf(mode),
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
