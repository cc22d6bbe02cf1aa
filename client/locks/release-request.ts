import type { ReleaseRequested } from "../../gen/ts/turnstile/v1/turnstile.js";

/**
 * Someone asks the holder of a lock to let go (docs/elections.md): the reason of `Lock.releaseRequested`
 * and the payload of the client's `releaseRequested` event. Nothing is enforced: the holder decides.
 */
export interface ReleaseRequest {
  /** The lock's name. */
  name: string;
  /** The holder asked: the lock's owner. */
  owner: string;
  /** Who asks: "session <id>" for a session's request, "operator" (with the identity) for an operator's. */
  requester: string;
  /** The requester's free text. */
  reason: string;
  /** The requesting session's id when a session asked (what `Leadership.handOver` takes); else undefined. */
  sessionId?: string;
}

const SESSION = /^session ([0-9a-f]+)$/;

/** The ReleaseRequest a server's `releaseRequested` message stands for. */
export function releaseRequestOf(message: ReleaseRequested): ReleaseRequest {
  const { name, owner, requester, reason } = message;
  const sessionId = SESSION.exec(requester)?.[1];
  return { name, owner, requester, reason, ...(sessionId !== undefined && { sessionId }) };
}
