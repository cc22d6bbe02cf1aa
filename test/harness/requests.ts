import type { SessionRequest } from "../../gen/ts/turnstile/v1/turnstile.js";
import { LockMode } from "../../gen/ts/turnstile/v1/turnstile.js";
import { durationFromMs } from "../../wire/duration.js";

/** Builds an Acquire request; `owner` defaults to the request id, `waitMs` absent waits forever. */
export function acquireMsg(
  requestId: string,
  name: string,
  opts: {
    owner?: string;
    waitMs?: number;
    mode?: LockMode;
    limit?: number;
    value?: Buffer;
    lockDelayMs?: number;
    priority?: number;
  } = {},
): SessionRequest {
  const wait =
    opts.waitMs === undefined
      ? undefined
      : { seconds: BigInt(Math.floor(opts.waitMs / 1000)), nanos: (opts.waitMs % 1000) * 1e6 };
  return {
    kind: {
      $case: "acquire",
      acquire: {
        requestId,
        name,
        mode: opts.mode ?? LockMode.LOCK_MODE_EXCLUSIVE,
        limit: opts.limit ?? 0,
        wait,
        owner: opts.owner ?? requestId,
        value: opts.value ?? Buffer.alloc(0),
        traceParent: "",
        lockDelay: opts.lockDelayMs === undefined ? undefined : durationFromMs(opts.lockDelayMs),
        priority: opts.priority ?? 0,
      },
    },
  };
}

/** Builds an AcquireAll of exclusive `names` as owner "o"; `waitMs` absent waits forever. */
export function acquireAllMsg(
  requestId: string,
  names: string[],
  waitMs?: number,
  lockDelayMs?: number,
): SessionRequest {
  const wait =
    waitMs === undefined ? undefined : { seconds: BigInt(Math.floor(waitMs / 1000)), nanos: (waitMs % 1000) * 1e6 };
  const locks = names.map((name) => ({ name, mode: LockMode.LOCK_MODE_EXCLUSIVE, limit: 0 }));
  return {
    kind: {
      $case: "acquireAll",
      acquireAll: {
        requestId,
        locks,
        wait,
        owner: "o",
        value: Buffer.alloc(0),
        traceParent: "",
        lockDelay: lockDelayMs === undefined ? undefined : durationFromMs(lockDelayMs),
      },
    },
  };
}

/** Builds a Release request. */
export function releaseMsg(requestId: string, name: string, owner: string): SessionRequest {
  return { kind: { $case: "release", release: { requestId, name, owner, traceParent: "" } } };
}

/** Builds a KeepAlive request. */
export function keepAliveMsg(seq: number): SessionRequest {
  return { kind: { $case: "keepAlive", keepAlive: { seq: BigInt(seq) } } };
}

/** Builds a Cancel request. */
export function cancelMsg(requestId: string): SessionRequest {
  return { kind: { $case: "cancel", cancel: { requestId } } };
}

/** Builds a Close request. */
export function closeMsg(): SessionRequest {
  return { kind: { $case: "close", close: {} } };
}

/** Builds a Proclaim request. */
export function proclaimMsg(requestId: string, name: string, owner: string, value: Buffer | string): SessionRequest {
  const bytes = typeof value === "string" ? Buffer.from(value) : value;
  return { kind: { $case: "proclaim", proclaim: { requestId, name, owner, value: bytes } } };
}

/** Builds a Transfer request; `to` absent: the head of the queue. */
export function transferMsg(
  requestId: string,
  name: string,
  owner: string,
  to: { sessionId?: string; owner?: string } = {},
): SessionRequest {
  const transfer = { requestId, name, owner, toSessionId: to.sessionId ?? "", toOwner: to.owner ?? "" };
  return { kind: { $case: "transfer", transfer } };
}

/** Builds a RequestRelease request. */
export function requestReleaseMsg(requestId: string, name: string, reason: string): SessionRequest {
  return { kind: { $case: "requestRelease", requestRelease: { requestId, name, reason } } };
}
