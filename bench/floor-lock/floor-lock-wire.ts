// The floor lock's wire format, shared by its server and its bench client: raw bytes, no protobuf.
// A request is one op byte followed by the lock name (latin1); an answer is one byte.

/** The floor lock's one bidi method: every request and answer of a client travels on it. */
export const FLOOR_LOCK_PATH = "/bench.FloorLock/Lock";
/** Request op: wait for the lock named by the rest of the message. */
export const OP_ACQUIRE = 1;
/** Request op: let go of the lock named by the rest of the message. */
export const OP_RELEASE = 2;
/** Answer: the lock asked for is this client's (pushed to a waiter by the release that freed it). */
export const GRANTED = Buffer.from([1]);
/** Answer: the release took effect. */
export const RELEASED = Buffer.from([2]);
/** Answer (only from a server started with --queued): the acquire waits behind a holder. */
export const QUEUED = Buffer.from([3]);

/** A request: the op byte, then the name. */
export function floorRequest(op: typeof OP_ACQUIRE | typeof OP_RELEASE, name: string): Buffer {
  const out = Buffer.allocUnsafe(1 + Buffer.byteLength(name, "latin1"));
  out[0] = op;
  out.write(name, 1, "latin1");
  return out;
}
