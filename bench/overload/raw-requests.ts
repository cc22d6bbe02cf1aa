import { LockMode, type SessionRequest } from "../../gen/ts/turnstile/v1/turnstile.js";

/**
 * The raw session messages the overload phases write, built the way a flooding client would:
 * an Open with a 15 s TTL and no resume, and try-once exclusive acquires.
 */
export function openRequest(clientName: string): SessionRequest {
  return {
    kind: {
      $case: "open",
      open: { clientName, ttl: { seconds: 15n, nanos: 0 }, resumeSessionId: "", resumeSecret: "", held: [] },
    },
  };
}

/** A try-once (zero wait) exclusive acquire of `name` by `owner`, carrying `value`. */
export function tryOnceAcquire(name: string, requestId: string, owner: string, value: Buffer): SessionRequest {
  return {
    kind: {
      $case: "acquire",
      acquire: {
        requestId,
        name,
        mode: LockMode.LOCK_MODE_EXCLUSIVE,
        traceParent: "",
        priority: 0,
        limit: 0,
        wait: { seconds: 0n, nanos: 0 },
        owner,
        value,
      },
    },
  };
}
