import type { Acquired, Lost } from "../../gen/ts/turnstile/v1/turnstile.js";
import { holderKey } from "../../wire/holder-key.js";
import { MAX_TIMER_MS } from "../../wire/max-timer-ms.js";
import { LostLockError, type LostLockReason, lostReasonFromProto } from "../lost-lock-error.js";
import type { LeaseClock } from "./lease-clock.js";
import { Lock, type LockReleaser } from "./lock.js";
import type { ReleaseRequest } from "./release-request.js";

/**
 * One (name, owner) holder on the server, shared by every Lock handle granted for it. It stays
 * registered while releases of its handles are in flight, so a crossing `lost` is still noticed.
 */
export interface Holding {
  readonly name: string;
  readonly owner: string;
  readonly fencingToken: bigint;
  /** Its key in the session's holdings (holderKey of name and owner), built once. */
  readonly key: string;
  /** Live (not yet released or lost) handles. */
  readonly locks: Set<Lock>;
  /** Releases sent and not yet answered. */
  releasing: number;
  /** True once the holder is known to be gone (lost or session ended). */
  gone: boolean;
}

/**
 * The locks a session holds, with ONE timer armed for the earliest lease deadline of the clock.
 * When a deadline passes, the holding's handles are lost ('lease-unconfirmed') and `onUnconfirmed`
 * is called per handle so the session can release it on the server (best effort).
 */
export class HeldLocks {
  readonly #clock: LeaseClock<Holding>;
  readonly #releaser: LockReleaser;
  readonly #onUnconfirmed: (lock: Lock) => void;
  readonly #holdings = new Map<string, Holding>();
  #timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires, on the clock's monotonic ms. */
  #timerAtMs = Number.POSITIVE_INFINITY;
  #nextDeadlineMs = Number.POSITIVE_INFINITY;

  constructor(clock: LeaseClock<Holding>, releaser: LockReleaser, onUnconfirmed: (lock: Lock) => void) {
    this.#clock = clock;
    this.#releaser = releaser;
    this.#onUnconfirmed = onUnconfirmed;
  }

  /**
   * Registers a grant for an acquire sent at `acquireSentAtMs` and returns its new handle. The
   * handle comes back already lost if its lease deadline has passed by now.
   */
  grant(acquired: Acquired, owner: string, acquireSentAtMs: number): Lock {
    const key = holderKey(acquired.name, owner);
    let holding = this.#holdings.get(key);
    if (holding !== undefined && holding.fencingToken !== acquired.fencingToken) {
      // A new token means the server no longer counts the old holder.
      this.#lose(holding, "expired", false);
      holding = undefined;
    }
    if (holding === undefined) {
      const { name, fencingToken } = acquired;
      holding = { name, owner, fencingToken, key, locks: new Set(), releasing: 0, gone: false };
      this.#holdings.set(key, holding);
      // A re-entry keeps the first grant's send time: the conservative end of the lease.
      this.#clock.track(holding, acquireSentAtMs);
    }
    const { name, fencingToken, holdCount, fencingProof } = acquired;
    const lock = new Lock({ name, owner, fencingToken, holdCount, fencingProof }, this.#releaser);
    holding.locks.add(lock);
    this.rearm();
    this.sweep();
    return lock;
  }

  /** Takes a released handle out of its holding; undefined when the hold is already gone. */
  beginRelease(lock: Lock): Holding | undefined {
    const holding = this.#holdings.get(holderKey(lock.name, lock.owner));
    if (holding === undefined || !holding.locks.delete(lock)) return undefined;
    holding.releasing += 1;
    return holding;
  }

  /** Notes that a release begun with `beginRelease` was answered (or abandoned). */
  endRelease(holding: Holding): void {
    holding.releasing -= 1;
    if (holding.gone || holding.locks.size > 0 || holding.releasing > 0) return;
    this.#forget(holding);
    this.rearm();
  }

  /** Loses the holding a server `lost` message names (ignored when the token is not ours). */
  loseReported(lost: Lost): void {
    const holding = this.#holdings.get(holderKey(lost.name, lost.owner));
    if (holding === undefined) return;
    if (lost.fencingToken !== 0n && lost.fencingToken !== holding.fencingToken) return;
    this.#lose(holding, lostReasonFromProto(lost.reason), false);
    this.rearm();
  }

  /**
   * The holder of `lock` handed its hold over (Transferred): every handle of it ends as released, and the
   * holding is forgotten (the lease is the successor's now).
   */
  handedOver(lock: Lock): void {
    const holding = this.#holdings.get(holderKey(lock.name, lock.owner));
    if (holding === undefined || holding.fencingToken !== lock.fencingToken) return;
    holding.gone = true;
    this.#forget(holding);
    for (const handle of holding.locks) handle.markHandedOver();
    holding.locks.clear();
    this.rearm();
  }

  /** Tells every live handle of the holding `request` names that someone asks it to let go; false when none. */
  releaseRequested(request: ReleaseRequest): boolean {
    const holding = this.#holdings.get(holderKey(request.name, request.owner));
    if (holding === undefined || holding.locks.size === 0) return false;
    for (const lock of holding.locks) lock.markReleaseRequested(request);
    return true;
  }

  /**
   * Loses every holding at once, by default with 'session-ended' ('expired' when the server no
   * longer knows the session); `cause` says why the session ended.
   */
  loseAll(cause: unknown, lostReason: LostLockReason = "session-ended"): void {
    for (const holding of [...this.#holdings.values()]) {
      this.#lose(holding, lostReason, false, cause);
    }
    this.rearm();
  }

  /** Every holding still registered: with live handles, or with releases in flight. */
  holdings(): Holding[] {
    return [...this.#holdings.values()];
  }

  /** Notes that a resume renewed `holding` with an `open` sent at `sentAtMs` (see LeaseClock.confirmFor). */
  renewed(holding: Holding, sentAtMs: number): void {
    if (holding.gone) return;
    this.#clock.confirmFor(holding, sentAtMs);
    this.rearm();
  }

  /** Loses one holding that a resume found gone on the server ('expired'). */
  loseOnResume(holding: Holding): void {
    if (holding.gone) return;
    this.#lose(holding, "expired", false);
    this.rearm();
  }

  /** Milliseconds left of the lease of a live handle's holding; undefined for other handles. */
  remainingMs(lock: Lock): number | undefined {
    const holding = this.#holdings.get(holderKey(lock.name, lock.owner));
    const deadline = holding?.locks.has(lock) ? this.#clock.deadlineOf(holding) : undefined;
    return deadline === undefined ? undefined : deadline - this.#clock.now();
  }

  /** Loses every holding whose lease deadline has passed; cheap when none is due. */
  sweep(): void {
    if (this.#clock.now() >= this.#nextDeadlineMs) this.#expire();
  }

  /** Re-arms the single deadline timer; call after anything that moves a deadline. */
  rearm(): void {
    this.#nextDeadlineMs = this.#clock.nextDeadlineMs() ?? Number.POSITIVE_INFINITY;
    // A timer that fires no later than the next deadline stays: firing early only re-arms, and
    // keeping it saves a clearTimeout + setTimeout on every grant and release.
    if (this.#timer !== undefined && this.#timerAtMs <= this.#nextDeadlineMs) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#nextDeadlineMs === Number.POSITIVE_INFINITY) return;
    const delayMs = Math.min(MAX_TIMER_MS, Math.max(0, this.#nextDeadlineMs - this.#clock.now()));
    this.#timerAtMs = this.#clock.now() + delayMs;
    // Not sweep(): a timer may fire a fraction of a ms early, and must then re-arm, not give up.
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#expire();
    }, delayMs);
    // The session stream, not this timer, decides whether the process stays alive.
    this.#timer.unref();
  }

  /** Stops the deadline timer (the session is over). */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#nextDeadlineMs = Number.POSITIVE_INFINITY;
  }

  #expire(): void {
    for (const holding of this.#clock.takeExpired()) {
      this.#lose(holding, "lease-unconfirmed", true);
    }
    this.rearm();
  }

  #lose(holding: Holding, lostReason: LostLockReason, release: boolean, cause?: unknown): void {
    holding.gone = true;
    this.#forget(holding);
    const error = new LostLockError(holding, lostReason, { cause });
    for (const lock of holding.locks) {
      if (lock.markLost(error) && release) this.#onUnconfirmed(lock);
    }
    holding.locks.clear();
  }

  #forget(holding: Holding): void {
    if (this.#holdings.get(holding.key) === holding) this.#holdings.delete(holding.key);
    this.#clock.untrack(holding);
  }
}
