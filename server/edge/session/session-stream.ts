import { type ServerDuplexStream, status } from "@grpc/grpc-js";
import type { Open, SessionRequest, SessionResponse } from "../../../gen/ts/turnstile/v1/turnstile.js";
import type { ResumedHold } from "../../engine/lifecycle/session-keeper.js";
import { ServerError, toServerError } from "../../engine/server-error.js";
import type { Session } from "../../engine/sessions/session.js";
import type { FencingSigner } from "../../security/fencing/fencing-signer.js";
import type { ReleaseRequested, Revocation } from "../../store/store.js";
import { SessionTracer } from "../../tracing/session-tracer.js";
import { ADMITTED, READ, WRITTEN } from "../../tracing/wire-marks.js";
import { grpcStatusOf } from "../replies/failure-codes.js";
import { type GrantProofs, SessionReplies } from "../replies/session-replies.js";
import { malformedFailure } from "../strict-wire/strict-service.js";
import { KeepAliveCoalescer } from "./keep-alive-coalescer.js";
import type { IntakeTicket } from "./open-intake.js";
import type { AttachedStream, SessionDeps } from "./session-deps.js";
import type { AdmissionLane } from "./store-admission.js";

type Call = ServerDuplexStream<SessionRequest, SessionResponse>;

/**
 * Serves one Session stream: enforces Open-first (new or resumed session), turns each request into
 * one LockTable call and each failure into `Failed` (or, for session-level faults, a gRPC status
 * that ends the stream). A stream that breaks without Close abandons its pending acquires and
 * leaves its holds to their lease, so the client can resume them on any coordinator.
 */
export class SessionStream implements AttachedStream {
  private session?: Session;
  /** Requests that arrived while Open was still being answered. */
  private early?: SessionRequest[];
  /** What the engine tells this stream's session, rendered into messages written here. */
  private readonly replies: SessionReplies;
  private readonly keepAlive = new KeepAliveCoalescer(async (seq) => {
    const session = this.session!;
    if ((await this.deps.keeper.renew(session)) && !session.ended) this.replies.keepAliveAck(seq, session.ttlMs);
  });
  /** Gives back this stream's session slot, taken when its Open arrived. */
  private releaseSlot?: () => void;
  private ended = false;
  private closing = false;
  private tracer?: SessionTracer;
  private readonly lane: AdmissionLane;
  private intake?: IntakeTicket;
  /** Reasons the stream is paused now (Open being answered, a full admission lane). */
  private pauses = 0;

  /** `caller` is the authenticated identity the session belongs to ("" when security is off). */
  constructor(
    private readonly call: Call,
    private readonly deps: SessionDeps,
    private readonly caller = "",
  ) {
    this.replies = new SessionReplies(
      (r) => this.write(r),
      deps.fencing ? this.proofs(deps.fencing) : undefined,
      (err) => this.signFailed(err),
    );
    call.on("data", (message: SessionRequest) => this.onMessage(message));
    for (const event of ["end", "cancelled", "error", "close"]) call.on(event, () => this.finish("broken"));
    this.lane = deps.admission.lane({ pause: () => this.pause(), resume: () => this.unpause() });
    try {
      this.intake = deps.intake.admit((why) => this.abort(grpcStatusOf(why), why.message));
    } catch (err) {
      const e = toServerError(err, "open", deps.log);
      this.abort(grpcStatusOf(e), e.message);
    }
  }

  /** Holds of this session right now (for the locks-held gauge). */
  get heldCount(): number {
    return this.session?.held.size ?? 0;
  }

  /** Ends the stream with a status (a session-level fault). */
  abort(code: status, details: string): void {
    if (!this.ended) this.call.emit("error", { code, details });
    void this.finish("broken");
  }

  /**
   * Moves the session off this stream without touching the store (coordinator drain, or a resume
   * elsewhere on this coordinator), then ends the stream with `code`.
   */
  detach(code: status, details: string): void {
    void this.finish("detach");
    this.call.emit("error", { code, details });
  }

  /** An operator revoked a hold: if this stream's session has it, it is forgotten and reported Lost. */
  revoked(revocation: Revocation): void {
    if (this.session && !this.ended) this.deps.holds.revoked(this.session, revocation);
  }

  /** Someone asks a holder to let go: if this stream's session has that hold, it is told ReleaseRequested. */
  releaseRequested(request: ReleaseRequested): void {
    if (this.session && !this.ended) this.deps.handOvers.releaseRequested(this.session, request);
  }

  private onMessage(message: SessionRequest): void {
    if (this.ended) return;
    if (READ.hasSubscribers && this.session) READ.publish({ sessionId: this.session.id, kind: message.kind });
    if (this.early) {
      const max = this.deps.intake.limits.maxEarlyMessages;
      if (this.early.length < max) return void this.early.push(message);
      return void this.abort(status.RESOURCE_EXHAUSTED, `session: more than ${max} requests sent before opened`);
    }
    const bad = malformedFailure(message);
    if (bad && !this.session) return void this.abort(status.INVALID_ARGUMENT, bad.error.message);
    if (bad) return void (this.closing || this.fail(bad.requestId, bad.name, bad.error));
    const kind = message.kind;
    if (!this.session) {
      this.intake?.leave();
      if (kind?.$case === "open") void this.open(kind.open);
      else this.abort(status.FAILED_PRECONDITION, "session: the first message must be open");
      return;
    }
    const session = this.session;
    if (this.closing) return;
    const { table, validator, log } = this.deps;
    switch (kind?.$case) {
      case "acquire": {
        const op = () => table.acquire(session, this.mayLock(validator.acquire(kind.acquire)));
        const traced = this.tracer?.wrap("acquire", kind.acquire, op) ?? op;
        this.admit(kind.acquire.requestId, kind.acquire.name, traced, true);
        break;
      }
      case "release": {
        const op = () => table.release(session, this.mayLock(validator.release(kind.release)));
        this.admit(kind.release.requestId, kind.release.name, this.tracer?.wrap("release", kind.release, op) ?? op);
        break;
      }
      case "cancel":
        this.run(kind.cancel.requestId, "", async () => {
          validator.requestId("cancel.request_id", kind.cancel.requestId);
          // Not started yet: it never reached the store, so nothing is left to withdraw.
          if (this.lane.withdraw(kind.cancel.requestId))
            throw new ServerError("cancelled", "acquire: cancelled by the client (before it reached the store)");
          if (!table.sets.cancel(session, kind.cancel.requestId)) table.cancel(session, kind.cancel.requestId);
        });
        break;
      case "keepAlive":
        this.keepAlive.push(kind.keepAlive.seq).catch((err) => log.error({ err }, "keepalive failed"));
        break;
      case "proclaim":
        this.admit(kind.proclaim.requestId, kind.proclaim.name, () =>
          this.deps.holds.proclaim(session, this.mayLock(validator.proclaim(kind.proclaim))),
        );
        break;
      case "transfer": {
        const t = kind.transfer;
        this.admit(t.requestId, t.name, () =>
          this.deps.handOvers.transfer(session, this.mayLock(validator.transfer(t))),
        );
        break;
      }
      case "requestRelease": {
        const r = kind.requestRelease;
        const op = () => this.deps.handOvers.requestRelease(session, this.mayLock(validator.requestRelease(r)));
        this.admit(r.requestId, r.name, op);
        break;
      }
      case "acquireAll": {
        const all = kind.acquireAll;
        const op = () => {
          const valid = validator.acquireAll(all);
          for (const l of valid.locks) this.deps.guard.require(this.caller, "lock", l.name);
          return table.sets.acquire(session, valid);
        };
        this.admit(all.requestId, "", op, true);
        break;
      }
      case "close":
        this.closing = true;
        this.lane.close();
        void this.close();
        break;
      case "open":
        this.fail("", "", new ServerError("invalid-argument", "open: the session is already open"));
        break;
      default:
        this.fail("", "", new ServerError("invalid-argument", "request: no known field set in SessionRequest"));
    }
  }

  private async open(open: Open): Promise<void> {
    this.early = [];
    // Requests behind Open wait in the client's HTTP/2 window, not here, until Opened.
    this.pause();
    const { keeper, validator, slots, sessions } = this.deps;
    try {
      const valid = validator.open(open);
      this.releaseSlot = slots.reserve();
      let secret = open.resumeSecret;
      let held: ResumedHold[] | undefined;
      if (open.resumeSessionId) {
        const resumed = await keeper.resume(open, this.replies, this.caller);
        sessions.get(resumed.session.id)?.detach(status.ABORTED, "session: resumed on another stream");
        this.session = resumed.session;
        held = resumed.held;
      } else {
        const opened = await keeper.open(valid, this.replies, this.caller);
        this.session = opened.session;
        secret = opened.secret;
      }
      if (this.ended) return void keeper.end(this.session, "broken");
      sessions.set(this.session.id, this);
      if (this.deps.traces) this.tracer = new SessionTracer(this.deps.traces, this.session.id);
      this.replies.opened(this.session.id, secret, this.session.ttlMs, held);
    } catch (err) {
      const e = toServerError(err, "open", this.deps.log);
      return this.abort(grpcStatusOf(e), e.message);
    }
    const early = this.early;
    this.early = undefined;
    this.unpause();
    for (const message of early) this.onMessage(message);
  }

  private async close(): Promise<void> {
    const session = this.session!;
    try {
      await this.deps.keeper.end(session, "close");
      await this.replies.drained();
      this.retire();
      this.call.end();
    } catch (err) {
      this.deps.log.warn({ err, session: session.id }, "close: release failed; holds expire with their lease");
      this.abort(status.UNAVAILABLE, "close: the store is unreachable; holds expire with their lease");
    }
  }

  /**
   * Queues a request that needs the store in the session's admission lane (in stream order: a
   * request starts only after the ones before it have started) and answers its failure; a full
   * lane answers RESOURCE_EXHAUSTED before the store is touched.
   */
  private admit(requestId: string, name: string, op: () => Promise<void>, acquire = false): void {
    try {
      this.lane.submit(
        requestId,
        async () => {
          if (ADMITTED.hasSubscribers) ADMITTED.publish({ sessionId: this.session?.id, requestId });
          try {
            await op();
          } catch (err) {
            this.fail(requestId, name, err, acquire);
          }
        },
        acquire,
      );
    } catch (err) {
      this.fail(requestId, name, err, acquire);
    }
  }

  private pause(): void {
    if (this.pauses++ === 0) this.call.pause();
  }

  private unpause(): void {
    if (--this.pauses === 0 && !this.ended) this.call.resume();
  }

  /** Signs grants' fencing proofs for this session's holders. */
  private proofs(signer: FencingSigner): GrantProofs {
    const holder = (owner: string) => {
      const session = this.session!;
      return { caller: this.caller, client: session.clientName, session: session.id, owner };
    };
    return {
      later: (name, token, owner, done) => signer.signLater(name, token, holder(owner), done),
      now: (name, token, owner) => signer.sign(name, token, holder(owner)),
    };
  }

  /** A grant could not be signed: it is never told; the session's holds are left to resume. */
  private signFailed(err: Error): void {
    const e = toServerError(err, "fencing-proof", this.deps.log);
    this.abort(grpcStatusOf(e), e.message);
  }

  /** The request, if the caller may lock its name; throws PERMISSION_DENIED (answered Failed) if not. */
  private mayLock<R extends { name: string }>(request: R): R {
    this.deps.guard.require(this.caller, "lock", request.name);
    return request;
  }

  /** Runs one request now (so store calls keep the stream's order) and answers its failure. */
  private run(requestId: string, name: string, op: () => Promise<void>): void {
    try {
      op().catch((err) => this.fail(requestId, name, err));
    } catch (err) {
      this.fail(requestId, name, err);
    }
  }

  private fail(requestId: string, name: string, err: unknown, acquire = false): void {
    const error = toServerError(err, requestId, this.deps.log);
    if (acquire) this.deps.table.ledger.acquireFailed(error.reason);
    // The id and name are echoed as sent, unvalidated: cut to their limits, so that a client that sends
    // 64 KiB names and stops reading cannot make each Failed it leaves unread cost that much here.
    const { maxIdBytes, maxNameBytes } = this.deps.limits;
    this.session?.tell.failed(utf8Prefix(requestId, maxIdBytes), utf8Prefix(name, maxNameBytes), error);
  }

  private write(response: SessionResponse): void {
    if (this.ended) return;
    this.tracer?.response(response);
    // The stream is in object mode: writableLength counts messages. 'drain' only reflects this
    // local buffer, so this bound is what stops a client that never reads from growing it.
    const max = this.deps.limits.maxOutboundMessages;
    if (this.call.writableLength < max) {
      this.call.write(response);
      if (WRITTEN.hasSubscribers) WRITTEN.publish({ sessionId: this.session?.id, kind: response.kind });
    } else this.abort(status.RESOURCE_EXHAUSTED, `session: more than ${max} messages unread by the client`);
  }

  /** Marks this stream done and unregisters its session; true the first time only. */
  private retire(): boolean {
    if (this.ended) return false;
    this.ended = true;
    this.tracer?.end();
    this.intake?.leave();
    this.releaseSlot?.();
    this.lane.close();
    if (this.session) {
      this.session.ended = true;
      if (this.deps.sessions.get(this.session.id) === this) this.deps.sessions.delete(this.session.id);
    }
    return true;
  }

  private async finish(how: "broken" | "detach"): Promise<void> {
    // A client may half-close right after Close; close() is already releasing everything.
    if (this.closing || !this.retire() || !this.session) return;
    await this.deps.keeper.end(this.session, how).catch((err) => this.deps.log.warn({ err }, "session end failed"));
  }
}

const UTF8 = new TextEncoder();

/** `text` if it fits in `maxBytes` of UTF-8, else its longest prefix of whole characters that does. */
function utf8Prefix(text: string, maxBytes: number): string {
  // Fits, byte count aside: no UTF-16 unit takes more than 3 bytes.
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  // encodeInto stops before a character that would not fit whole, surrogate pairs included.
  return text.slice(0, UTF8.encodeInto(text, new Uint8Array(maxBytes)).read);
}
