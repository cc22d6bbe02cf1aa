import { randomUUID } from "node:crypto";
import type { LockMode, SessionRequest } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { durationFromMs } from "../../../wire/duration.js";
import type { HeldLocks } from "../../locks/held-locks.js";
import type { MonotonicClock } from "../../locks/lease-clock.js";
import type { Lock } from "../../locks/lock.js";
import { currentTraceParent } from "../../trace-context.js";
import { errorFromFailed, TurnstileError } from "../../turnstile-error.js";
import { AcquireAttempt, type AttemptOwner, AttemptTicket } from "./acquire-attempt.js";
import { checkAcquireOptionTypes, checkNameType } from "./acquire-option-types.js";
import type { ReleasedHold } from "./releases-in-flight.js";
import type { RequestAnswer, RequestRegistry } from "./request-answer.js";

/** One acquire as the session sends it; mode and limit are here so shared locks can reuse it. */
export interface SessionAcquire {
  name: string;
  owner: string;
  mode: LockMode;
  limit: number;
  /** Absent: wait forever; 0: try once. */
  waitMs?: number;
  value?: Uint8Array;
  /** Absent: the server's default for the name's prefix. */
  lockDelayMs?: number;
  /** Queue rank; absent: 0. */
  priority?: number;
  /** Told each `queued` answer's position (never sent: it stays on this side). */
  onQueued?: (position: number) => void;
}

/**
 * The SessionAcquire for a caller's options: `waitMs` Infinity waits forever, `owner` defaults to a
 * fresh unique owner (so same-process acquires exclude). Throws TurnstileError 'invalid-argument' for
 * a negative wait, or a name or owner that is not valid UTF-8.
 */
export function sessionAcquire(
  name: string,
  mode: LockMode,
  limit: number,
  options: {
    waitMs?: number;
    owner?: string;
    value?: Uint8Array;
    onQueued?: (position: number) => void;
    lockDelayMs?: number;
    priority?: number;
  },
): SessionAcquire {
  checkNameType(name);
  checkAcquireOptionTypes(options);
  const { waitMs, value, onQueued, lockDelayMs, priority } = options;
  // The range (0..100) is the server's to name: it answers INVALID_ARGUMENT naming acquire.priority.
  if (priority !== undefined && !Number.isInteger(priority)) {
    throw new TurnstileError("invalid-argument", `priority must be an integer, got ${priority}`);
  }
  if (waitMs !== undefined && !(waitMs >= 0)) {
    throw new TurnstileError("invalid-argument", `waitMs must be >= 0, got ${waitMs}`);
  }
  // The upper bound (60 s) is the server's to name: it answers INVALID_ARGUMENT naming acquire.lock_delay.
  if (lockDelayMs !== undefined && !(lockDelayMs >= 0 && Number.isFinite(lockDelayMs))) {
    throw new TurnstileError("invalid-argument", `lockDelayMs must be a finite number >= 0, got ${lockDelayMs}`);
  }
  checkUtf8("name", name);
  // A generated owner is a UUID (ASCII): only the caller's own needs the check.
  let owner = options.owner;
  if (owner === undefined) owner = randomUUID();
  else checkUtf8("owner", owner);
  const wait = waitMs === Number.POSITIVE_INFINITY ? undefined : waitMs;
  const request: SessionAcquire = { name, owner, mode, limit, waitMs: wait, value, onQueued };
  if (lockDelayMs !== undefined) request.lockDelayMs = lockDelayMs;
  if (priority) request.priority = priority;
  return request;
}

// UTF-8 cannot carry a lone surrogate: encoded, it would silently become U+FFFD, another lock.
function checkUtf8(field: "name" | "owner", text: string): void {
  if (LONE_SURROGATE.test(text))
    throw new TurnstileError("invalid-argument", `${field}: not valid UTF-8 (a lone surrogate)`);
}

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * One acquire not yet answered. It survives a broken stream and is re-sent after a resume with
 * the same request id; `firstSentAtMs` (the first send) is the conservative start of its lease.
 */
export interface PendingAcquire {
  readonly requestId: string;
  readonly request: SessionAcquire;
  readonly firstSentAtMs: number;
  /** When the client gives up waiting for the answer (see AcquireDeadlines); Infinity for no wait. */
  readonly giveUpAtMs: number;
  /** The caller's trace context when it asked (W3C traceparent, or ""): a re-sent acquire carries it too. */
  readonly traceParent: string;
  /** The caller gave up (abort, or its wait ran out while disconnected): a late grant is released. */
  abandoned: boolean;
  /** Rejects the caller's promise; the request itself stays in flight until answered. */
  fail(error: Error): void;
}

/**
 * The wait to re-send an acquire with after a resume: the original wait minus the time since it
 * was first sent. 'forever' for no wait, 0 for a try-once, 'ran-out' when nothing is left.
 */
export function remainingWaitMs(
  waitMs: number | undefined,
  firstSentAtMs: number,
  nowMs: number,
): number | "forever" | "ran-out" {
  if (waitMs === undefined) return "forever";
  if (waitMs === 0) return 0;
  const leftMs = waitMs - (nowMs - firstSentAtMs);
  return leftMs > 0 ? leftMs : "ran-out";
}

/** The `acquire` message of a request; `waitMs` undefined waits forever; `traceParent` the caller's, or "". */
export function acquireMessage(
  requestId: string,
  request: SessionAcquire,
  waitMs: number | undefined,
  traceParent: string,
): NonNullable<SessionRequest["kind"]> {
  const { name, owner, mode, limit, value, lockDelayMs, priority = 0 } = request;
  const wait = waitMs === undefined ? undefined : durationFromMs(waitMs);
  const bytes = value === undefined ? NO_VALUE : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  const lockDelay = lockDelayMs === undefined ? undefined : durationFromMs(lockDelayMs);
  return {
    $case: "acquire",
    acquire: { requestId, name, mode, limit, wait, owner, value: bytes, traceParent, lockDelay, priority },
  };
}

// Shared by every acquire without a value: encoding only reads it.
const NO_VALUE = Buffer.alloc(0);

/** One registered acquire: its request id and message, the caller's answer, and how to give up on it. */
export interface AcquireTicket {
  requestId: string;
  /** The `acquire` to send now. */
  message: NonNullable<SessionRequest["kind"]>;
  answer: Promise<Lock>;
  /**
   * The caller gives up: true when the request is still in flight (send a `cancel`); a grant that
   * already arrived is released, one still to come will be.
   */
  abandon(): boolean;
}

/**
 * The session's acquires not yet answered, by request id. They outlive a broken stream (a resume
 * re-sends them). A grant for an abandoned acquire is released quietly; others become Locks.
 */
export class AcquiresInFlight implements AttemptOwner<SessionAcquire> {
  readonly #pending: RequestRegistry;
  readonly #held: HeldLocks;
  readonly #now: MonotonicClock;
  readonly #releaseQuietly: (hold: ReleasedHold) => void;
  readonly #acquires = new Map<string, AcquireAttempt<SessionAcquire>>();

  constructor(
    pending: RequestRegistry,
    held: HeldLocks,
    now: MonotonicClock,
    releaseQuietly: (hold: ReleasedHold) => void,
  ) {
    this.#pending = pending;
    this.#held = held;
    this.#now = now;
    this.#releaseQuietly = releaseQuietly;
  }

  /** The acquires in flight, by request id (a resume re-sends them). */
  get byId(): ReadonlyMap<string, PendingAcquire> {
    return this.#acquires;
  }

  /**
   * Registers `request` (first sent now; the client gives up on it at `giveUpAtMs`); the answer
   * resolves with the Lock, or rejects with a TurnstileError for a `failed` answer or the end of the session, or with a LostLockError when
   * the lease had already run out at grant time.
   */
  add(request: SessionAcquire, giveUpAtMs: number): AcquireTicket {
    // Read now, in the caller's context: a resume re-sends the acquire from a stream event, outside it.
    const traceParent = currentTraceParent();
    const attempt = new AcquireAttempt(this, request, giveUpAtMs, traceParent);
    attempt.requestId = this.#pending.add(attempt);
    attempt.firstSentAtMs = this.#now();
    this.#acquires.set(attempt.requestId, attempt);
    const message = acquireMessage(attempt.requestId, request, request.waitMs, traceParent);
    return new AttemptTicket(attempt, this, message);
  }

  /** Internal (AcquireAttempt): the caller gives up on `attempt` (see AcquireTicket.abandon). */
  abandon(attempt: AcquireAttempt<SessionAcquire>): boolean {
    const inFlight = this.#acquires.get(attempt.requestId);
    if (inFlight !== undefined) inFlight.abandoned = true;
    else attempt.lock?.release().catch(() => {});
    return inFlight !== undefined;
  }

  /**
   * Internal (AcquireAttempt): the server answered `attempt`. Runs in the message handler, so the
   * holding exists before a `lost` right behind the grant.
   */
  answered(attempt: AcquireAttempt<SessionAcquire>, reply: RequestAnswer): void {
    const inFlight = this.#acquires.get(attempt.requestId);
    this.#acquires.delete(attempt.requestId);
    if (reply.$case === "failed") {
      attempt.fail(errorFromFailed(reply.failed));
    } else if (reply.$case !== "acquired") {
      attempt.fail(new TurnstileError("internal", `acquire answered with ${reply.$case}`));
    } else if (inFlight === undefined || inFlight.abandoned) {
      const { name, fencingToken } = reply.acquired;
      // The attempt is in hand even when no longer in flight: its owner, never "", is the grant's.
      this.#releaseQuietly({ name, owner: attempt.request.owner, fencingToken });
    } else {
      const lock = this.#held.grant(reply.acquired, inFlight.request.owner, inFlight.firstSentAtMs);
      attempt.lock = lock;
      if (lock.lost) attempt.fail(lock.signal.reason);
      else attempt.grant(lock);
    }
  }

  /** Internal (AcquireAttempt): the session ended before `attempt` was answered. */
  ended(attempt: AcquireAttempt<SessionAcquire>, error: Error): void {
    this.#acquires.delete(attempt.requestId);
    attempt.fail(error);
  }
}
