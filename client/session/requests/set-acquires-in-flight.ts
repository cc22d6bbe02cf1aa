import { randomUUID } from "node:crypto";
import { LockMode, type SessionRequest } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { durationFromMs } from "../../../wire/duration.js";
import type { HeldLocks } from "../../locks/held-locks.js";
import type { MonotonicClock } from "../../locks/lease-clock.js";
import type { Lock } from "../../locks/lock.js";
import { MAX_WIRE_LIMIT } from "../../locks/max-wire-limit.js";
import { currentTraceParent } from "../../trace-context.js";
import { errorFromFailed, TurnstileError } from "../../turnstile-error.js";
import { checkAcquireOptionTypes, checkNameType, typeOf } from "./acquire-option-types.js";
import type { ReleasedHold } from "./releases-in-flight.js";
import type { RequestAnswer, RequestRegistry } from "./request-answer.js";

/** One lock of an acquireAll: a name, or a name with its mode (default exclusive) and SHARED limit. */
export type LockClaimInput = string | { name: string; mode?: "exclusive" | "shared"; limit?: number };

/** One AcquireAll as the session sends it (`name` lists the names, for messages). */
export interface SessionSetAcquire {
  name: string;
  locks: { name: string; mode: LockMode; limit: number }[];
  owner: string;
  /** Absent: wait forever; 0: try once. */
  waitMs?: number;
  value?: Uint8Array;
  /** Told the `queued` answer's position on the first name the set waits for. */
  onQueued?: (position: number) => void;
  /** Every hold's lock-delay; absent: the server's default for each name's prefix. */
  lockDelayMs?: number;
}

/**
 * The SessionSetAcquire for a caller's claims and options, as sessionAcquire builds one Acquire:
 * `waitMs` Infinity waits forever, `owner` defaults to a fresh unique owner. Throws TurnstileError
 * 'invalid-argument' for a negative wait or lock-delay, a mode other than "exclusive" or "shared", a
 * limit that is not an integer from 0 to 2^32 - 1, or text that is not valid UTF-8; the server checks
 * the rest (empty or too many names, duplicates) and names the field.
 */
export function sessionSetAcquire(
  claims: readonly LockClaimInput[],
  options: {
    waitMs?: number;
    owner?: string;
    value?: Uint8Array;
    onQueued?: (position: number) => void;
    lockDelayMs?: number;
  },
): SessionSetAcquire {
  checkAcquireOptionTypes(options);
  if (!Array.isArray(claims)) {
    throw new TurnstileError("invalid-argument", "claims: expected an array of names or { name, mode, limit }");
  }
  const { waitMs, owner = randomUUID(), value, onQueued, lockDelayMs } = options;
  if (waitMs !== undefined && !(waitMs >= 0)) {
    throw new TurnstileError("invalid-argument", `waitMs must be >= 0, got ${waitMs}`);
  }
  // As sessionAcquire: the upper bound (60 s) is the server's to name (acquire_all.lock_delay).
  if (lockDelayMs !== undefined && !(lockDelayMs >= 0 && Number.isFinite(lockDelayMs))) {
    throw new TurnstileError("invalid-argument", `lockDelayMs must be a finite number >= 0, got ${lockDelayMs}`);
  }
  const locks = claims.map((c) => {
    const { name, mode = "exclusive", limit = 0 } = typeof c === "string" ? { name: c } : (c ?? {});
    checkNameType(name, "claims[].name");
    checkClaim(name, mode, limit);
    const wire = mode === "shared" ? LockMode.LOCK_MODE_SHARED : LockMode.LOCK_MODE_EXCLUSIVE;
    return { name, mode: wire, limit };
  });
  for (const text of [owner, ...locks.map((l) => l.name)]) {
    if (/\p{Cs}/u.test(text))
      throw new TurnstileError("invalid-argument", `"${text}": not valid UTF-8 (a lone surrogate)`);
  }
  const name = locks.map((l) => l.name).join(", ");
  const wait = waitMs === Number.POSITIVE_INFINITY ? undefined : waitMs;
  return { name, locks, owner, waitMs: wait, value, onQueued, ...(lockDelayMs !== undefined && { lockDelayMs }) };
}

/** Checks a claim's mode and limit: anything else would be sent as EXCLUSIVE, or could not be encoded. */
function checkClaim(name: string, mode: unknown, limit: unknown): void {
  if (mode !== "exclusive" && mode !== "shared") {
    const got = typeof mode === "string" ? JSON.stringify(mode) : typeOf(mode);
    const message = `claims[].mode of "${name}": expected "exclusive" or "shared", got ${got}`;
    throw new TurnstileError("invalid-argument", message);
  }
  if (!Number.isInteger(limit) || (limit as number) < 0 || (limit as number) > MAX_WIRE_LIMIT) {
    const got = typeof limit === "number" ? String(limit) : typeOf(limit);
    const message = `claims[].limit of "${name}": expected an integer from 0 to ${MAX_WIRE_LIMIT}, got ${got}`;
    throw new TurnstileError("invalid-argument", message);
  }
}

/** One AcquireAll not yet answered; like PendingAcquire, it survives a broken stream and is re-sent. */
export interface PendingSetAcquire {
  readonly requestId: string;
  readonly request: SessionSetAcquire;
  readonly firstSentAtMs: number;
  readonly giveUpAtMs: number;
  readonly traceParent: string;
  /** The caller gave up: a late grant is released, every lock of it. */
  abandoned: boolean;
  fail(error: Error): void;
}

/** The `acquireAll` message of a request; `waitMs` undefined waits forever. */
export function acquireAllMessage(
  requestId: string,
  request: SessionSetAcquire,
  waitMs: number | undefined,
  traceParent: string,
): NonNullable<SessionRequest["kind"]> {
  const { locks, owner, value = new Uint8Array(), lockDelayMs } = request;
  const wait = waitMs === undefined ? undefined : durationFromMs(waitMs);
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  const lockDelay = lockDelayMs === undefined ? undefined : durationFromMs(lockDelayMs);
  return {
    $case: "acquireAll",
    acquireAll: { requestId, locks, wait, owner, value: bytes, traceParent, lockDelay },
  };
}

/**
 * The session's AcquireAll requests not yet answered, by request id (AcquiresInFlight's twin for
 * sets). An AcquiredAll becomes one Lock per name, all at once; for an abandoned request (or one
 * whose lease ran out before the answer) every lock of it is released quietly.
 */
export class SetAcquiresInFlight {
  readonly #registry: RequestRegistry;
  readonly #held: HeldLocks;
  readonly #now: MonotonicClock;
  readonly #releaseQuietly: (hold: ReleasedHold) => void;
  readonly #sets = new Map<string, PendingSetAcquire>();

  constructor(
    registry: RequestRegistry,
    held: HeldLocks,
    now: MonotonicClock,
    releaseQuietly: (hold: ReleasedHold) => void,
  ) {
    this.#registry = registry;
    this.#held = held;
    this.#now = now;
    this.#releaseQuietly = releaseQuietly;
  }

  /** The sets in flight, by request id (a resume re-sends them). */
  get byId(): ReadonlyMap<string, PendingSetAcquire> {
    return this.#sets;
  }

  /** Registers `request`; see AcquiresInFlight.add. The answer resolves with the Locks in request order. */
  add(request: SessionSetAcquire, giveUpAtMs: number) {
    let requestId = "";
    let granted: Lock[] = [];
    const traceParent = currentTraceParent();
    const answer = new Promise<Lock[]>((resolve, reject) => {
      requestId = this.#registry.add({
        answer: (reply) => {
          granted = this.#onAnswer(requestId, reply, resolve, reject);
        },
        end: (error) => {
          this.#sets.delete(requestId);
          reject(error);
        },
      });
      const firstSentAtMs = this.#now();
      const attempt = { requestId, request, firstSentAtMs, giveUpAtMs, traceParent, abandoned: false, fail: reject };
      this.#sets.set(requestId, attempt);
    });
    const abandon = () => {
      const attempt = this.#sets.get(requestId);
      if (attempt !== undefined) attempt.abandoned = true;
      else for (const lock of granted) lock.release().catch(() => {});
      return attempt !== undefined;
    };
    return { requestId, message: acquireAllMessage(requestId, request, request.waitMs, traceParent), answer, abandon };
  }

  // Runs in the message handler, so the holdings exist before a `lost` right behind the grant.
  #onAnswer(
    requestId: string,
    reply: RequestAnswer,
    resolve: (locks: Lock[]) => void,
    reject: (error: Error) => void,
  ): Lock[] {
    const attempt = this.#sets.get(requestId);
    this.#sets.delete(requestId);
    if (reply.$case === "failed") {
      reject(errorFromFailed(reply.failed));
      return [];
    }
    if (reply.$case !== "acquiredAll") {
      reject(new TurnstileError("internal", `acquireAll answered with ${reply.$case}`));
      return [];
    }
    const owner = attempt?.request.owner ?? "";
    if (attempt === undefined || attempt.abandoned) {
      for (const { name, fencingToken } of reply.acquiredAll.locks) this.#releaseQuietly({ name, owner, fencingToken });
      return [];
    }
    const locks = reply.acquiredAll.locks.map((a) => this.#held.grant(a, owner, attempt.firstSentAtMs));
    const lost = locks.find((lock) => lock.lost);
    if (lost === undefined) {
      resolve(locks);
      return locks;
    }
    // All or nothing here too: one lease already over means the set is not held; let the rest go.
    for (const lock of locks) lock.release().catch(() => {});
    reject(lost.signal.reason);
    return [];
  }
}
