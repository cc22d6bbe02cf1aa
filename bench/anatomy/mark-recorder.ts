import { type Channel, channel } from "node:diagnostics_channel";
import { describeKind, type Mark, type MarkSource } from "./marks.js";

/** A message published on one of Turnstile's wire-mark channels (see server/ and client/ wire-marks.ts). */
interface Published {
  sessionId?: string;
  requestId?: string;
  kind?: { $case: string };
  phase?: string;
  op?: string;
  name?: string;
  /** DECODED: the decoded request and when its bytes reached the deserializer. */
  message?: { kind?: object };
  startedAt?: bigint;
}

const DECODED = "turnstile:coordinator:decoded";

/** The channels of each side and the event prefix each one's marks get. */
const CHANNELS: Record<MarkSource, [string, (m: Published) => string][]> = {
  client: [
    ["turnstile:client:sent", () => "sent"],
    ["turnstile:client:received", () => "received"],
  ],
  coordinator: [
    [DECODED, () => "decoded"],
    ["turnstile:coordinator:read", () => "read"],
    ["turnstile:coordinator:admitted", () => "admitted"],
    ["turnstile:coordinator:written", () => "written"],
    ["turnstile:coordinator:store", (m) => `store-${m.phase}:${m.op}`],
    ["turnstile:coordinator:redis-flush", () => "flush"],
  ],
};

/**
 * Subscribes to one side's wire-mark channels and keeps every mark with its monotonic timestamp,
 * taken first thing in the (synchronous) subscriber. Each mark is reduced to its ids at once, so no
 * message is kept alive by the recording (which would add garbage-collection work to what is measured).
 */
export class MarkRecorder {
  readonly #marks: Mark[] = [];
  readonly #subscriptions: [Channel, (message: unknown) => void][] = [];
  /** When each decoded request's bytes reached the deserializer and when it was decoded, by its `kind` object. */
  readonly #decoded = new WeakMap<object, { startedAt: bigint; decodedAt: bigint }>();

  constructor(readonly source: MarkSource) {
    for (const [name, prefix] of CHANNELS[source]) {
      const handler = (message: unknown) => {
        const t = process.hrtime.bigint();
        const m = message as Published;
        if (name === DECODED) {
          if (m.message?.kind && m.startedAt !== undefined)
            this.#decoded.set(m.message.kind, { startedAt: m.startedAt, decodedAt: t });
          return;
        }
        // The read of a decoded request: its decoding's two points join the same request.
        const decoded = m.kind ? this.#decoded.get(m.kind) : undefined;
        if (decoded) {
          this.#push(decoded.startedAt, "decode-start", m);
          this.#push(decoded.decodedAt, "decoded", m);
        }
        this.#push(t, prefix(m), m);
      };
      const ch = channel(name);
      ch.subscribe(handler);
      this.#subscriptions.push([ch, handler]);
    }
  }

  /** Records a point the bench itself sees (e.g. "resolved", "release-called") for `sessionId`. */
  mark(event: string, sessionId: string, name = ""): void {
    this.#push(process.hrtime.bigint(), event, { sessionId, name });
  }

  /** Every mark so far, in the order taken. */
  marks(): Mark[] {
    return [...this.#marks];
  }

  /** Stops recording. */
  close(): void {
    for (const [ch, handler] of this.#subscriptions) ch.unsubscribe(handler);
    this.#subscriptions.length = 0;
  }

  #push(t: bigint, prefix: string, message: Published): void {
    const described = message.kind ? describeKind(message.kind) : undefined;
    this.#marks.push({
      t: Number(t),
      source: this.source,
      event: described ? `${prefix}:${described.kind}` : prefix,
      sessionId: message.sessionId ?? "",
      requestId: described?.requestId ?? message.requestId ?? "",
      name: described?.name || message.name || "",
    });
  }
}
