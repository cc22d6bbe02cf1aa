import type { ClientDuplexStream } from "@grpc/grpc-js";
import {
  LockMode,
  type LockServiceClient,
  type SessionRequest,
  type SessionResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";

/** What every session of the idle fleet reports to. */
export interface FleetTally {
  /** Keepalive round trips in ms (send to ack), while `recording`. */
  rttMs: number[];
  recording: boolean;
  acks: number;
  lost: number;
  failures: number;
  lastFailure?: string;
}

/**
 * One session of the idle fleet on the raw protocol: it opens, takes its locks, then only sends
 * a keepalive every TTL/3 (from a random phase) and times each ack. The raw stream is used instead
 * of TurnstileClient so that 10,000 sessions stay cheap on the client side and the keepalive round
 * trip can be measured.
 */
export class FleetSession {
  readonly #stream: ClientDuplexStream<SessionRequest, SessionResponse>;
  readonly #sentAt = new Map<bigint, number>();
  #seq = 0n;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #waiting: { count: number; resolve: () => void; reject: (e: Error) => void } | undefined;

  constructor(
    rpc: LockServiceClient,
    private readonly ttlMs: number,
    private readonly tally: FleetTally,
  ) {
    this.#stream = rpc.session();
    this.#stream.on("data", (r: SessionResponse) => this.#onMessage(r));
    this.#stream.on("error", (err: Error) => {
      if (!this.#stopped) this.#fail(`stream ended: ${err.message}`);
    });
  }

  /** Opens the session, then acquires every name; resolves once all are held. */
  async start(names: string[]): Promise<void> {
    const ttl = { seconds: BigInt(Math.floor(this.ttlMs / 1000)), nanos: (this.ttlMs % 1000) * 1e6 };
    await this.#expect(1, () =>
      this.#send({
        $case: "open",
        open: { clientName: "fleet", ttl, resumeSessionId: "", resumeSecret: "", held: [] },
      }),
    );
    await this.#expect(names.length, () => {
      names.forEach((name, i) => {
        const acquire = { requestId: `r${i}`, name, mode: LockMode.LOCK_MODE_EXCLUSIVE, limit: 0, owner: "o" };
        this.#send({
          $case: "acquire",
          acquire: { ...acquire, wait: undefined, value: Buffer.alloc(0), traceParent: "", priority: 0 },
        });
      });
    });
  }

  /** Starts the keepalive: first after `phaseMs`, then every TTL/3. */
  keepAlive(phaseMs: number): void {
    this.#timer = setTimeout(() => {
      this.#beat();
      this.#timer = setInterval(() => this.#beat(), this.ttlMs / 3);
    }, phaseMs);
  }

  /** Stops the keepalive and cancels the stream (its locks are left to expire or be flushed). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearInterval(this.#timer);
    this.#stream.cancel();
  }

  #beat(): void {
    this.#seq++;
    this.#sentAt.set(this.#seq, performance.now());
    this.#send({ $case: "keepAlive", keepAlive: { seq: this.#seq } });
  }

  #send(kind: SessionRequest["kind"]): void {
    this.#stream.write({ kind });
  }

  #expect(count: number, send: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting = { count, resolve, reject };
      send();
    });
  }

  #onMessage(r: SessionResponse): void {
    const kind = r.kind;
    switch (kind?.$case) {
      case "opened":
      case "acquired":
        if (this.#waiting && --this.#waiting.count === 0) this.#waiting.resolve();
        break;
      case "keepAliveAck": {
        const sentAt = this.#sentAt.get(kind.keepAliveAck.seq);
        this.#sentAt.delete(kind.keepAliveAck.seq);
        this.tally.acks++;
        if (sentAt !== undefined && this.tally.recording) this.tally.rttMs.push(performance.now() - sentAt);
        break;
      }
      case "lost":
        this.tally.lost++;
        break;
      case "failed":
        this.#fail(`${kind.failed.name}: ${kind.failed.message}`);
        break;
      default:
        break;
    }
  }

  #fail(why: string): void {
    this.tally.failures++;
    this.tally.lastFailure = why;
    this.#waiting?.reject(new Error(why));
    this.#waiting = undefined;
  }
}
