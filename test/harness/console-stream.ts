import { get, type IncomingMessage } from "node:http";
import { get as getHttps } from "node:https";
import { EventWaiters } from "./event-waiters.js";

/** One server-sent event of the console stream, its data parsed. */
export interface ConsoleEvent {
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: the test reads the JSON the page reads
  data: any;
}

/**
 * A reader of the console's `/api/stream` over plain node:http (so a test can stop reading and let
 * TCP back-pressure build up): `next` waits for an event matching a predicate, with a timeout.
 */
export class ConsoleStream {
  readonly events: ConsoleEvent[] = [];
  private buffer = "";
  private readonly waiters = new EventWaiters();
  private res?: IncomingMessage;
  bytes = 0;

  private constructor() {}

  /**
   * Opens the stream (over HTTPS trusting `ca` when the URL is https:); resolves with it on 200,
   * or rejects with the status and body otherwise.
   */
  static open(url: string, token?: string, ca?: string): Promise<ConsoleStream> {
    const stream = new ConsoleStream();
    return new Promise((resolve, reject) => {
      const headers = token ? { authorization: `Bearer ${token}` } : {};
      const open = url.startsWith("https:") ? getHttps : get;
      open(url, { headers, ca }, (res) => {
        if (res.statusCode !== 200) {
          let body = "";
          res.on("data", (c) => (body += c));
          res.on("end", () => reject(new Error(`HTTP ${res.statusCode}: ${body}`)));
          return;
        }
        stream.res = res;
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => stream.take(chunk));
        resolve(stream);
      }).on("error", reject);
    });
  }

  /** The first event (from the start, or after index `from`) of kind `event` that `match` accepts. */
  async next(
    event: string,
    match: (data: ConsoleEvent["data"]) => boolean = () => true,
    timeoutMs = 10_000,
    from = 0,
  ): Promise<ConsoleEvent> {
    return this.waiters.take(
      () => this.events.slice(from).find((e) => e.event === event && match(e.data)),
      timeoutMs,
      () => `no "${event}" event matched within ${timeoutMs} ms (${this.events.length} seen)`,
    );
  }

  /** Waits until `count` events of kind `event` arrived after index `from`; resolves with all events since. */
  async count(event: string, count: number, from: number, timeoutMs = 10_000): Promise<ConsoleEvent[]> {
    let index = from;
    for (let i = 0; i < count; i++) {
      const found = await this.next(event, () => true, timeoutMs, index);
      index = this.events.indexOf(found, index) + 1;
    }
    return this.events.slice(from);
  }

  /** Stops reading: the socket's buffers fill and the server sees a slow browser. */
  pause(): void {
    this.res?.pause();
  }

  resume(): void {
    this.res?.resume();
  }

  /** Stops reading and ends every wait still pending (their timers with them). */
  close(): void {
    this.res?.destroy();
    this.waiters.cancel("the console stream was closed");
  }

  private take(chunk: string): void {
    this.bytes += Buffer.byteLength(chunk);
    this.buffer += chunk;
    for (let end = this.buffer.indexOf("\n\n"); end >= 0; end = this.buffer.indexOf("\n\n")) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event && data) this.events.push({ event, data: JSON.parse(data) });
    }
    this.waiters.notify();
  }
}
