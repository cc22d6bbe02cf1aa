import type { DeadlockStep, HeldLock, SessionResponse } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { LostReason } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { durationFromMs } from "../../../wire/duration.js";
import type { ServerError } from "../../engine/server-error.js";
import type { LossReason, SessionSink, SetGrant } from "../../engine/sessions/session-sink.js";
import type { HeldWait } from "../../store/wait-registry.js";
import { failureReasonOf } from "./failure-codes.js";
import { blockerOf } from "./lock-state-replies.js";

/** Signs the fencing proofs of grants to this stream's session (see FencingSigner). */
export interface GrantProofs {
  /** Signs on libuv's thread pool and calls `done` with the proof, or with the error signing raised. */
  later(name: string, token: bigint, owner: string, done: (err: Error | null, proof: string) => void): void;
  /** Signs on the event loop; throws what signing raised. */
  now(name: string, token: bigint, owner: string): string;
}

/** A proof signed ahead for a grant the engine expects (SessionSink.expectGrant). */
interface Expected {
  name: string;
  token: bigint;
  owner: string;
  /** The proof once signed; "" while signing (or after signing failed). */
  proof: string;
  err: Error | null;
  /** The grant waiting for this proof, once it came before the signature. */
  waiting?: (err: Error | null, proof: string) => void;
}

/** A reply held back until the fencing proofs it carries are signed. */
interface Pending {
  response: SessionResponse;
  /** Proofs still being signed for it. */
  unsigned: number;
}

const LOST: Record<LossReason, LostReason> = {
  expired: LostReason.LOST_REASON_EXPIRED,
  revoked: LostReason.LOST_REASON_REVOKED,
  "session-ended": LostReason.LOST_REASON_SESSION_ENDED,
};

/**
 * Renders what the engine tells a session into the server-to-client messages of one stream, so the
 * wire shape lives in one place; Opened and KeepAliveAck, the stream's own answers, are built here too.
 * Each call writes exactly one message, in call order: while a grant's fencing proof is being signed,
 * the replies after it wait behind it.
 */
export class SessionReplies implements SessionSink {
  /** Replies in call order behind a grant whose proof is still being signed; empty otherwise. */
  private readonly backlog: Pending[] = [];
  private drainWaiters: Array<() => void> = [];
  /** Proofs signed ahead, by the request id of the queued acquire they are for. */
  private readonly expected = new Map<string, Expected>();

  /**
   * `proofs` sign a grant's fencing proof (`serve --fencing-key`); absent, grants carry none (""). It
   * is asked once per lock granted, re-entries included. `signFailed` hears a signing error: the grant
   * is then never told (a grant without its proof would be one a guard refuses).
   */
  constructor(
    private readonly write: (response: SessionResponse) => void,
    private readonly proofs?: GrantProofs,
    private readonly signFailed?: (err: Error) => void,
  ) {}

  /** Resolves once every reply asked for so far is written (none is waiting for its proof). */
  drained(): Promise<void> {
    if (this.backlog.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Opened for a new session, or (with `held`) for a resumed one. */
  opened(sessionId: string, resumeSecret: string, ttlMs: number, held?: HeldLock[]): void {
    const resumed = held !== undefined;
    const opened = { sessionId, resumeSecret, ttl: durationFromMs(ttlMs), resumed, held: held ?? [] };
    this.send({ kind: { $case: "opened", opened } });
  }

  keepAliveAck(seq: bigint, ttlMs: number): void {
    this.send({ kind: { $case: "keepAliveAck", keepAliveAck: { seq, ttl: durationFromMs(ttlMs) } } });
  }

  /**
   * Signs the expected grant's proof (with a fencing key) while the release ahead of it runs: on the
   * event loop, which is cheaper in CPU than the thread pool's hand-offs, but in a setImmediate, so
   * after the release's script was written to the store (at the end of its tick; see the engine's
   * hint) and while the store runs it.
   */
  expectGrant(requestId: string, name: string, token: bigint, owner: string): void {
    const proofs = this.proofs;
    if (!proofs) return;
    const expected: Expected = { name, token, owner, proof: "", err: null };
    this.expected.set(requestId, expected);
    setImmediate(() => {
      if (this.expected.get(requestId) !== expected && !expected.waiting) return; // answered otherwise
      try {
        expected.proof = proofs.now(name, token, owner);
      } catch (err) {
        expected.err = err as Error;
      }
      const waiting = expected.waiting;
      expected.waiting = undefined;
      waiting?.(expected.err, expected.proof);
    });
  }

  granted(requestId: string, name: string, fencingToken: bigint, holdCount: number, owner: string): void {
    const acquired = { requestId, name, fencingToken, holdCount, fencingProof: "" };
    const response: SessionResponse = { kind: { $case: "acquired", acquired } };
    const proofs = this.proofs;
    if (!proofs) {
      this.send(response);
      return;
    }
    const ahead = this.expected.get(requestId);
    if (ahead) this.expected.delete(requestId);
    const matches = ahead && ahead.name === name && ahead.token === fencingToken && ahead.owner === owner;
    if (matches && ahead.proof) {
      acquired.fencingProof = ahead.proof;
      this.send(response);
      return;
    }
    const pending = this.hold(response, 1);
    const done = (err: Error | null, proof: string) => {
      acquired.fencingProof = proof;
      this.signed(pending, err);
    };
    if (matches && !ahead.err) ahead.waiting = done;
    else proofs.later(name, fencingToken, owner, done);
  }

  grantedSet(requestId: string, grants: readonly SetGrant[], owner: string): void {
    const locks = grants.map((g) => ({
      requestId,
      name: g.name,
      fencingToken: g.token,
      holdCount: 1,
      fencingProof: "",
    }));
    const response: SessionResponse = { kind: { $case: "acquiredAll", acquiredAll: { requestId, locks } } };
    const proofs = this.proofs;
    if (!proofs || locks.length === 0) {
      this.send(response);
      return;
    }
    const pending = this.hold(response, locks.length);
    for (const lock of locks) {
      proofs.later(lock.name, lock.fencingToken, owner, (err, proof) => {
        lock.fencingProof = proof;
        this.signed(pending, err);
      });
    }
  }

  queued(requestId: string, name: string, position: number): void {
    this.send({ kind: { $case: "queued", queued: { requestId, name, position } } });
  }

  released(requestId: string, name: string, holdCount: number): void {
    this.send({ kind: { $case: "released", released: { requestId, name, holdCount } } });
  }

  proclaimed(requestId: string, name: string): void {
    this.send({ kind: { $case: "proclaimed", proclaimed: { requestId, name } } });
  }

  lost(name: string, owner: string, fencingToken: bigint, reason: LossReason): void {
    this.send({ kind: { $case: "lost", lost: { name, owner, fencingToken, reason: LOST[reason] } } });
  }

  transferred(requestId: string, name: string, toSessionId: string, toOwner: string, fencingToken: bigint): void {
    const transferred = { requestId, name, toSessionId, toOwner, fencingToken };
    this.send({ kind: { $case: "transferred", transferred } });
  }

  releaseRequestSent(requestId: string, name: string, holders: number): void {
    this.send({ kind: { $case: "releaseRequestSent", releaseRequestSent: { requestId, name, holders } } });
  }

  releaseRequested(name: string, owner: string, requester: string, reason: string): void {
    this.send({ kind: { $case: "releaseRequested", releaseRequested: { name, owner, requester, reason } } });
  }

  /** Failed, with the holders a timed-out acquire waited behind and a deadlock victim's cycle. */
  failed(requestId: string, name: string, err: ServerError): void {
    this.expected.delete(requestId);
    const evidence = err.evidence;
    const failed = {
      requestId,
      name,
      reason: failureReasonOf(err),
      message: err.message,
      blockedBy: evidence?.blockedBy?.map((b) => ({ ...blockerOf(b.holder), name: b.name })) ?? [],
      deadlockCycle: evidence?.deadlockCycle ? deadlockSteps(evidence.deadlockCycle) : [],
    };
    this.send({ kind: { $case: "failed", failed } });
  }

  /** Writes now, or behind the grants still waiting for their proofs. */
  private send(response: SessionResponse): void {
    if (this.backlog.length === 0) this.write(response);
    else this.backlog.push({ response, unsigned: 0 });
  }

  /** Queues a grant until its `unsigned` proofs are signed. */
  private hold(response: SessionResponse, unsigned: number): Pending {
    const pending = { response, unsigned };
    this.backlog.push(pending);
    return pending;
  }

  /** One proof of `pending` is signed (or failed): writes every reply now at the head that is ready. */
  private signed(pending: Pending, err: Error | null): void {
    if (err) {
      this.backlog.length = 0;
      this.signFailed?.(err);
    } else pending.unsigned--;
    while (this.backlog.length > 0 && this.backlog[0]!.unsigned === 0) this.write(this.backlog.shift()!.response);
    if (this.backlog.length === 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}

/** The cycle as the wire's Failed.deadlock_cycle carries it, starting with the victim. */
function deadlockSteps(cycle: readonly HeldWait[]): DeadlockStep[] {
  return cycle.map((w) => ({
    sessionId: w.sessionId,
    owner: w.owner,
    clientName: w.clientName,
    requestId: w.requestId,
    name: w.name,
  }));
}
