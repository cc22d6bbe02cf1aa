import { type ChannelCredentials, type ClientDuplexStream, credentials, type ServiceError } from "@grpc/grpc-js";
import {
  type HeldLock,
  LockServiceClient,
  type SessionRequest,
  type SessionResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { EventWaiters } from "./event-waiters.js";

type Kind = NonNullable<SessionResponse["kind"]>;
type Of<C extends Kind["$case"]> = Extract<Kind, { $case: C }>;

/**
 * A bare session stream for protocol-level tests: sends raw requests and waits for responses by
 * predicate, with a timeout. Responses are buffered, so none is missed between waits.
 */
export class RawSession {
  readonly client: LockServiceClient;
  readonly stream: ClientDuplexStream<SessionRequest, SessionResponse>;
  readonly received: SessionResponse[] = [];
  private readonly waiters = new EventWaiters();
  /** The status the stream ended with, once it has. */
  ended?: { code: number; details: string };

  /** Opens the stream to `address` (plaintext unless `creds` say otherwise). */
  constructor(address: string, creds: ChannelCredentials = credentials.createInsecure()) {
    this.client = new LockServiceClient(address, creds);
    this.stream = this.client.session();
    this.stream.on("data", (r: SessionResponse) => {
      this.received.push(r);
      this.waiters.notify();
    });
    this.stream.on("error", (err: ServiceError) => {
      this.ended = { code: err.code, details: err.details };
      this.waiters.notify();
    });
    this.stream.on("status", (s: { code: number; details: string }) => {
      this.ended ??= { code: s.code, details: s.details };
      this.waiters.notify();
    });
  }

  send(request: SessionRequest): void {
    this.stream.write(request);
  }

  /** Sends Open and resolves with Opened. */
  async open(ttlMs = 5000): Promise<Of<"opened">["opened"]> {
    this.sendOpen(ttlMs);
    return (await this.next("opened")).opened;
  }

  /** Sends Open without waiting for the answer; with `resume`, asks to resume that session. */
  sendOpen(ttlMs = 5000, resume?: { sessionId: string; secret: string; held?: HeldLock[] }): void {
    this.send({
      kind: {
        $case: "open",
        open: {
          clientName: "test",
          ttl: { seconds: BigInt(Math.floor(ttlMs / 1000)), nanos: (ttlMs % 1000) * 1e6 },
          resumeSessionId: resume?.sessionId ?? "",
          resumeSecret: resume?.secret ?? "",
          held: resume?.held ?? [],
        },
      },
    });
  }

  /** Resolves with the first response of that case not yet taken (optionally matching). */
  async next<C extends Kind["$case"]>(
    kase: C,
    match: (r: Of<C>) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<Of<C>> {
    const found = await this.until(
      () => {
        const i = this.received.findIndex((r) => r.kind?.$case === kase && match(r.kind as Of<C>));
        return i >= 0 ? (this.received.splice(i, 1)[0].kind as Of<C>) : undefined;
      },
      `${kase} response`,
      timeoutMs,
    );
    return found;
  }

  /** Resolves with the status once the stream has ended. */
  async status(timeoutMs = 5000): Promise<{ code: number; details: string }> {
    return this.until(() => this.ended, "end of stream", timeoutMs);
  }

  /** Cancels the stream, closes the channel and ends every wait still pending (their timers with them). */
  close(): void {
    this.stream.cancel();
    this.client.close();
    this.waiters.cancel("the raw session was closed");
  }

  private until<T>(probe: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
    const received = () => JSON.stringify(this.received, (_k, v) => (typeof v === "bigint" ? String(v) : v));
    return this.waiters.take(
      probe,
      timeoutMs,
      () => `timed out after ${timeoutMs} ms waiting for ${what}; received: ${received()}`,
    );
  }
}
