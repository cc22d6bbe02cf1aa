import { credentials, Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import { expect } from "chai";
import { SessionStream } from "../../client/session/session-stream.js";
import type { TurnstileError } from "../../client/turnstile-error.js";
import {
  LockMode,
  LockServiceClient,
  LockServiceService,
  type SessionRequest,
  type SessionResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";

// 16 KiB of value per acquire: a few of them fill the HTTP/2 window of a coordinator that reads nothing.
const VALUE = Buffer.alloc(16 * 1024, 7);

function acquire(i: number): SessionRequest["kind"] {
  const acquire = { requestId: String(i), name: "bp", mode: LockMode.LOCK_MODE_EXCLUSIVE, limit: 0, owner: "o" };
  return { $case: "acquire", acquire: { ...acquire, value: VALUE, traceParent: "", priority: 0 } };
}

/** What the stalled coordinator received, in order: "acquire:<id>" or "keepAlive:<seq>". */
function label(request: SessionRequest): string {
  const kind = request.kind;
  if (kind?.$case === "acquire") return `acquire:${kind.acquire.requestId}`;
  if (kind?.$case === "keepAlive") return `keepAlive:${kind.keepAlive.seq}`;
  return String(kind?.$case);
}

/** A LockService whose Session handler does not read until `resume()`; it records every request. */
class StalledCoordinator {
  readonly received: string[] = [];
  #server = new Server();
  #call: Promise<ServerDuplexStream<SessionRequest, SessionResponse>>;
  #callArrived: (call: ServerDuplexStream<SessionRequest, SessionResponse>) => void = () => {};
  #waiters: { count: number; resolve: () => void }[] = [];
  address = "";

  constructor() {
    this.#call = new Promise((resolve) => {
      this.#callArrived = resolve;
    });
  }

  async start(): Promise<void> {
    this.#server.addService(LockServiceService, {
      session: (call: ServerDuplexStream<SessionRequest, SessionResponse>) => {
        call.pause();
        this.#callArrived(call);
        call.on("data", (request: SessionRequest) => {
          this.received.push(label(request));
          for (const w of this.#waiters.filter((w) => this.received.length >= w.count)) w.resolve();
        });
      },
    } as never);
    const port = await new Promise<number>((resolve, reject) =>
      this.#server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    this.address = `127.0.0.1:${port}`;
  }

  /** Starts reading (once the call arrived); resolves once `count` requests arrived (rejects after 10 s). */
  async readUntil(count: number): Promise<void> {
    const arrived = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`got ${this.received.length} of ${count} requests`)), 10_000);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#waiters.push({ count, resolve: done });
    });
    (await this.#call).resume();
    return arrived;
  }

  stop(): void {
    this.#server.forceShutdown();
  }
}

describe("SessionStream backpressure", () => {
  let coordinator: StalledCoordinator;
  let rpc: LockServiceClient;
  let stream: SessionStream | undefined;

  beforeEach(async () => {
    coordinator = new StalledCoordinator();
    await coordinator.start();
    rpc = new LockServiceClient(coordinator.address, credentials.createInsecure());
  });
  afterEach(() => {
    stream?.cancel();
    rpc.close();
    coordinator.stop();
  });

  it("queues requests while the call's buffer is full and writes every one, in order, after 'drain'", async () => {
    stream = new SessionStream(rpc, { message() {}, ended() {} });
    const count = 500;
    let firstQueued = -1;
    for (let i = 0; i < count; i += 1) {
      expect(stream.send(acquire(i))).to.equal(true);
      if (firstQueued < 0 && stream.queued > 0) firstQueued = i;
    }
    expect(firstQueued, "a request waited for 'drain'").to.be.greaterThan(0);
    expect(stream.queued).to.equal(count - firstQueued);
    await coordinator.readUntil(count);
    expect(coordinator.received).to.deep.equal(Array.from({ length: count }, (_, i) => `acquire:${i}`));
    expect(stream.queued).to.equal(0);
  });

  it("sends the newest queued keepalive ahead of the queued acquires, and drops the older one", async () => {
    stream = new SessionStream(rpc, { message() {}, ended() {} });
    let straight = -1;
    for (let i = 0; i < 100; i += 1) {
      stream.send(acquire(i));
      if (straight < 0 && stream.queued > 0) straight = i;
    }
    stream.send({ $case: "keepAlive", keepAlive: { seq: 1n } });
    stream.send({ $case: "keepAlive", keepAlive: { seq: 2n } });
    for (let i = 100; i < 110; i += 1) stream.send(acquire(i));
    expect(straight).to.be.greaterThan(0);
    await coordinator.readUntil(111);
    const acquires = coordinator.received.filter((r) => r.startsWith("acquire:"));
    expect(acquires).to.deep.equal(Array.from({ length: 110 }, (_, i) => `acquire:${i}`));
    expect(coordinator.received).to.not.include("keepAlive:1");
    // Written straight through: acquires 0 .. straight-1; the keepalive jumps every queued acquire.
    expect(coordinator.received.indexOf("keepAlive:2")).to.equal(straight);
  });

  it("gives up on a coordinator that reads nothing past maxQueued: the stream ends with a 'connection' error", async () => {
    let ended: (error: TurnstileError) => void = () => {};
    const end = new Promise<TurnstileError>((resolve) => {
      ended = resolve;
    });
    stream = new SessionStream(rpc, { message() {}, ended: (error) => ended(error) }, { maxQueued: 5 });
    const accepted: boolean[] = [];
    for (let i = 0; i < 100 && stream.writable; i += 1) accepted.push(stream.send(acquire(i)));
    expect(accepted.at(-1), "the request past the limit is refused").to.equal(false);
    expect(stream.writable).to.equal(false);
    const error = await end;
    expect(error.reason).to.equal("connection");
    expect(error.message).to.match(/5 requests waited for the coordinator to read \(the limit\); reconnecting/);
    expect(stream.queued).to.equal(0);
  });
});
