import { EventEmitter, once } from "node:events";
import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on a free loopback port forwarding every connection to `target` (host:port). After
 * `freeze()` it forwards nothing in either direction — no bytes, no FIN, no reset — while keeping
 * every socket open: to both ends the connection is half-open, as after a cable cut. It still
 * reads (and drops) what arrives, so it sees when an end closes its side.
 */
export class TcpProxy extends EventEmitter<{ "target-closed": [] }> {
  readonly #server: Server;
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  readonly #delayMs: number;
  #frozen = false;
  /** Connections the target closed after `freeze()`. */
  targetClosedWhileFrozen = 0;
  address = "";

  private constructor(target: string, delayMs: number) {
    super();
    this.#delayMs = delayMs;
    const [host, port] = splitAddress(target);
    this.#target = { host, port };
    this.#server = createServer((client) => this.#pipe(client));
  }

  /**
   * Starts a proxy to `target` and resolves once it listens. With `delayMs` every chunk is forwarded
   * that much later, in order, each way: a link with that latency.
   */
  static async start(target: string, { delayMs = 0 }: { delayMs?: number } = {}): Promise<TcpProxy> {
    const proxy = new TcpProxy(target, delayMs);
    proxy.#server.listen(0, "127.0.0.1");
    await once(proxy.#server, "listening");
    const bound = proxy.#server.address();
    proxy.address = `127.0.0.1:${typeof bound === "object" && bound ? bound.port : 0}`;
    return proxy;
  }

  /** Stops forwarding in both directions without closing any socket. */
  freeze(): void {
    this.#frozen = true;
  }

  /** Resolves once the target has closed a connection while frozen (it noticed the dead peer). */
  async targetClosed(timeoutMs: number): Promise<void> {
    if (this.targetClosedWhileFrozen > 0) return;
    await once(this, "target-closed", { signal: AbortSignal.timeout(timeoutMs) });
  }

  /** Closes the listener and destroys every socket. */
  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #pipe(client: Socket): void {
    const target = createConnection(this.#target);
    this.#forward(client, target);
    this.#forward(target, client);
    target.once("close", () => {
      if (!this.#frozen) return;
      this.targetClosedWhileFrozen += 1;
      this.emit("target-closed");
    });
  }

  #forward(from: Socket, to: Socket): void {
    this.#sockets.add(from);
    from.on("data", (chunk) => {
      if (this.#delayMs === 0) {
        if (!this.#frozen) to.write(chunk);
        return;
      }
      setTimeout(() => {
        if (!this.#frozen && !to.destroyed) to.write(chunk);
      }, this.#delayMs);
    });
    from.on("end", () => {
      if (!this.#frozen) to.end();
    });
    from.on("error", () => {});
    from.on("close", () => {
      this.#sockets.delete(from);
      if (!this.#frozen) to.destroy();
    });
  }
}

function splitAddress(address: string): [string, number] {
  const colon = address.lastIndexOf(":");
  return [address.slice(0, colon), Number(address.slice(colon + 1))];
}
