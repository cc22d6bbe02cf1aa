import { randomBytes } from "node:crypto";

/**
 * The one form of a session id: 32 lowercase hex digits. Store keys, holder ids ("session:owner")
 * and waiter ids ("session:request") rely on it: a session id never contains ":", so the first
 * colon always ends it, and ids from outside (Revoke, resume) are checked against this before use.
 */
const SESSION_ID = /^[0-9a-f]{32}$/;

/** A fresh random session id. */
export function newSessionId(): string {
  return randomBytes(16).toString("hex");
}

/** True when `id` has the form every session id has. */
export function isSessionId(id: string): boolean {
  return SESSION_ID.test(id);
}
