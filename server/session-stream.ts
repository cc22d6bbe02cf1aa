import { type ServerDuplexStream, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { SessionRequest, SessionResponse } from "../gen/ts/turnstile/v1/turnstile.js";
import type { Limits } from "./limits.js";
import type { LockTable } from "./lock-table.js";
import type { RequestValidator } from "./request-validator.js";
import { ServerError } from "./server-error.js";
import { Session } from "./session.js";
import { SessionReplies as reply } from "./session-replies.js";
import { StoreUnavailableError } from "./store/store-unavailable-error.js";

/** What every session stream of one coordinator shares. */
export interface SessionDeps {
  table: LockTable;
  validator: RequestValidator;
  limits: Limits;
  log: Logger;
  /** Open sessions of this coordinator (for the session limit and shutdown). */
  sessions: Set<SessionStream>;
}

type Call = ServerDuplexStream<SessionRequest, SessionResponse>;

/**
 * Serves one Session stream: enforces Open-first, turns each request into one LockTable call and
 * each failure into `Failed` (or, for session-level faults, a gRPC status that ends the stream).
 * A stream that breaks without Close withdraws its pending acquires and leaves its holds to expire.
 */
export class SessionStream {
  private session?: Session;
  private keepAlive: { running: boolean; next?: bigint } = { running: false };
  private ended = false;
  private closing = false;

  constructor(
    private readonly call: Call,
    private readonly deps: SessionDeps,
  ) {
    call.on("data", (message: SessionRequest) => this.onMessage(message));
    call.on("end", () => this.finish(false));
    call.on("cancelled", () => this.finish(false));
    call.on("error", () => this.finish(false));
    call.on("close", () => this.finish(false));
  }

  /** Holds of this session right now (for the locks-held gauge). */
  get heldCount(): number {
    return this.session?.held.size ?? 0;
  }

  /** Ends the stream with a status (coordinator shutdown or a session-level fault). */
  abort(code: status, details: string): void {
    if (!this.ended) this.call.emit("error", { code, details });
    void this.finish(false);
  }

  private onMessage(message: SessionRequest): void {
    const kind = message.kind;
    if (!this.session) {
      if (kind?.$case === "open") this.open(kind.open);
      else this.abort(status.FAILED_PRECONDITION, "session: the first message must be open");
      return;
    }
    const session = this.session;
    if (this.closing) return;
    const { table, validator, log } = this.deps;
    switch (kind?.$case) {
      case "acquire":
        this.run(kind.acquire.requestId, kind.acquire.name, () =>
          table.acquire(session, validator.acquire(kind.acquire)),
        );
        break;
      case "release":
        this.run(kind.release.requestId, kind.release.name, () =>
          table.release(session, validator.release(kind.release)),
        );
        break;
      case "cancel":
        this.run(kind.cancel.requestId, "", async () => {
          validator.requestId("cancel.request_id", kind.cancel.requestId);
          table.cancel(session, kind.cancel.requestId);
        });
        break;
      case "keepAlive":
        this.renew(kind.keepAlive.seq).catch((err) => log.error({ err }, "keepalive failed"));
        break;
      case "close":
        this.closing = true;
        void this.close();
        break;
      case "open":
        this.fail("", "", new ServerError("invalid-argument", "open: the session is already open"));
        break;
      default:
        this.fail("", "", new ServerError("invalid-argument", "request: no known field set in SessionRequest"));
    }
  }

  private open(open: Parameters<RequestValidator["open"]>[0]): void {
    try {
      const valid = this.deps.validator.open(open);
      if (open.resumeSessionId)
        throw new ServerError(
          "failed-precondition",
          `open.resume_session_id: session "${open.resumeSessionId}" is unknown or expired`,
        );
      if (this.deps.sessions.size >= this.deps.limits.maxSessions) {
        throw new ServerError("resource-exhausted", `coordinator: at most ${this.deps.limits.maxSessions} sessions`);
      }
      this.session = new Session(valid.clientName, valid.ttlMs, (r) => this.write(r));
      this.deps.sessions.add(this);
      this.session.send(reply.opened(this.session.id, "", valid.ttlMs));
    } catch (err) {
      const e = err instanceof ServerError ? err : new ServerError("internal", "open: internal error");
      this.abort(e.grpcStatus, e.message);
    }
  }

  /** Keepalives coalesce: one renewal at a time; the newest seq waiting is acked after the next. */
  private async renew(seq: bigint): Promise<void> {
    const session = this.session!;
    if (this.keepAlive.running) {
      this.keepAlive.next = seq;
      return;
    }
    this.keepAlive.running = true;
    try {
      if (await this.deps.table.renew(session)) session.send(reply.keepAliveAck(seq, session.ttlMs));
    } finally {
      this.keepAlive.running = false;
    }
    const next = this.keepAlive.next;
    this.keepAlive.next = undefined;
    if (next !== undefined) await this.renew(next);
  }

  private async close(): Promise<void> {
    const session = this.session!;
    try {
      await this.deps.table.end(session, true);
      session.ended = true;
      this.deps.sessions.delete(this);
      this.call.end();
    } catch (err) {
      this.deps.log.warn({ err, session: session.id }, "close: release failed; holds expire with their lease");
      this.abort(status.UNAVAILABLE, "close: the store is unreachable; holds expire with their lease");
    }
  }

  /** Runs one request now (so store calls keep the stream's order) and answers its failure. */
  private run(requestId: string, name: string, op: () => Promise<void>): void {
    try {
      op().catch((err) => this.fail(requestId, name, err));
    } catch (err) {
      this.fail(requestId, name, err);
    }
  }

  private fail(requestId: string, name: string, err: unknown): void {
    let e: ServerError;
    if (err instanceof ServerError) e = err;
    else if (err instanceof StoreUnavailableError)
      e = new ServerError("unavailable", "store unavailable: nothing was changed, retry later");
    else {
      this.deps.log.error({ err, session: this.session?.id, requestId }, "internal error");
      e = new ServerError("internal", "internal error (logged on the server)");
    }
    this.session?.send(reply.failed(requestId, name, e));
  }

  private write(response: SessionResponse): void {
    // The stream is in object mode: writableLength counts messages. 'drain' only reflects this
    // local buffer, so this bound is what stops a client that never reads from growing it.
    if (this.call.writableLength >= this.deps.limits.maxOutboundMessages) {
      this.abort(
        status.RESOURCE_EXHAUSTED,
        `session: more than ${this.deps.limits.maxOutboundMessages} messages unread by the client`,
      );
      return;
    }
    this.call.write(response);
  }

  private async finish(close: boolean): Promise<void> {
    // A client may half-close right after Close; close() is already releasing everything.
    if (this.ended || this.closing) return;
    this.ended = true;
    this.deps.sessions.delete(this);
    const session = this.session;
    if (!session || session.ended) return;
    session.ended = true;
    await this.deps.table.end(session, close).catch((err) => this.deps.log.warn({ err }, "session end failed"));
  }
}
