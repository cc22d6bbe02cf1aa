import { Server, ServerCredentials, type ServerDuplexStream, type status } from "@grpc/grpc-js";
import {
  type Acquire,
  type HeldLock,
  LockServiceService,
  type Open,
  type SessionRequest,
  type SessionResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { EventWaiters } from "./event-waiters.js";

const TTL = { seconds: 15n, nanos: 0 };

type Kind = NonNullable<SessionRequest["kind"]>;
type Of<C extends Kind["$case"]> = Extract<Kind, { $case: C }>;
type Call = ServerDuplexStream<SessionRequest, SessionResponse>;

/**
 * A gRPC server speaking the Session protocol by the test's script, for client tests that need
 * answers the real coordinator gives only in rare races (a resume that lost a release, a refused
 * secret). Each stream is handed to the test as a ScriptedStream; nothing is answered unasked,
 * except that `close` ends the stream.
 */
export class ScriptedCoordinator {
  readonly #server = new Server();
  readonly #streams: ScriptedStream[] = [];
  readonly #waiters = new EventWaiters();
  address = "";

  /** Starts a scripted coordinator on a free loopback port. */
  static async start(): Promise<ScriptedCoordinator> {
    const coordinator = new ScriptedCoordinator();
    coordinator.#server.addService(LockServiceService, {
      session: (call: Call) => {
        coordinator.#streams.push(new ScriptedStream(call));
        coordinator.#waiters.notify();
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      coordinator.#server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    coordinator.address = `127.0.0.1:${port}`;
    return coordinator;
  }

  /** Resolves with the next session stream a client opened (in order); rejects after `timeoutMs`. */
  async nextStream(timeoutMs = 5000): Promise<ScriptedStream> {
    return this.#waiters.take(
      () => this.#streams.shift(),
      timeoutMs,
      () => `no session stream opened within ${timeoutMs} ms`,
    );
  }

  /** Stops at once, cutting every stream. */
  stop(): void {
    this.#server.forceShutdown();
  }
}

/** One session stream on a ScriptedCoordinator: read the client's requests, answer as scripted. */
export class ScriptedStream {
  readonly #call: Call;
  readonly #received: Kind[] = [];
  readonly #waiters = new EventWaiters();
  ended = false;

  constructor(call: Call) {
    this.#call = call;
    call.on("data", (request: SessionRequest) => {
      if (request.kind) this.#received.push(request.kind);
      // As the coordinator does once everything is released: `close` ends the stream with OK.
      if (request.kind?.$case === "close") call.end();
      this.#waiters.notify();
    });
    for (const event of ["end", "cancelled", "error", "close"]) {
      call.on(event, () => {
        this.ended = true;
        this.#waiters.notify();
      });
    }
  }

  /** Resolves with the first request of that case not yet taken; rejects after `timeoutMs`. */
  async next<C extends Kind["$case"]>(kase: C, timeoutMs = 5000): Promise<Of<C>> {
    return this.#waiters.take(
      () => {
        const i = this.#received.findIndex((kind) => kind.$case === kase);
        return i >= 0 ? (this.#received.splice(i, 1)[0] as Of<C>) : undefined;
      },
      timeoutMs,
      () => `no ${kase} request within ${timeoutMs} ms; got ${this.#describe()}`,
    );
  }

  /** The requests received and not yet taken, by case, oldest first. */
  pending(): Kind["$case"][] {
    return this.#received.map((kind) => kind.$case);
  }

  /** Answers the stream's `open` as a fresh session (secret "secret", TTL 15 s) and returns the open. */
  async openFresh(sessionId = "s1"): Promise<Open> {
    const { open } = await this.next("open");
    const opened = { sessionId, resumeSecret: "secret", ttl: TTL, resumed: false, held: [] };
    this.send({ $case: "opened", opened });
    return open;
  }

  /** Answers a resume's `open` as resumed, listing `held` as still held. */
  resumed(held: HeldLock[], sessionId = "s1"): void {
    this.send({ $case: "opened", opened: { sessionId, resumeSecret: "", ttl: TTL, resumed: true, held } });
  }

  /** Answers the next `acquire` with a grant of `token` and returns the request. */
  async grantNext(token: bigint, holdCount = 1): Promise<Acquire> {
    const { acquire } = await this.next("acquire");
    const { requestId, name } = acquire;
    this.send({ $case: "acquired", acquired: { requestId, name, fencingToken: token, holdCount, fencingProof: "" } });
    return acquire;
  }

  /** Writes one response. */
  send(kind: SessionResponse["kind"]): void {
    this.#call.write({ kind });
  }

  /** Ends the stream with a status, as the coordinator does for session-level faults. */
  fail(code: status, details: string): void {
    this.#call.emit("error", { code, details });
  }

  #describe(): string {
    return JSON.stringify(this.pending());
  }
}
