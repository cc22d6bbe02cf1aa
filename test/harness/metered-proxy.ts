import { once } from "node:events";
import { createConnection, createServer, type Server, type Socket } from "node:net";

/** Bytes and writes seen in one direction of a proxied connection. */
export interface DirectionCount {
  bytes: number;
  /** Chunks read from the sender: its socket writes, as far as TCP kept them apart. */
  chunks: number;
}

/** Sees every chunk of one proxied connection, in each direction. */
export type ChunkObserver = (direction: "up" | "down", chunk: Buffer) => void;

/**
 * A TCP proxy on a free loopback port that forwards every connection to `target` (host:port) and
 * counts what passes each way: `up` is from the connecting side (a client, a coordinator) to the
 * target, `down` back. `observe` makes one observer per connection, which sees its chunks too (a
 * protocol meter). For tests that count the
 * work of an operation on a connection; it adds a hop, so never for timing.
 */
export class MeteredProxy {
  readonly up: DirectionCount = { bytes: 0, chunks: 0 };
  readonly down: DirectionCount = { bytes: 0, chunks: 0 };
  address = "";
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  private constructor(
    private readonly target: { host: string; port: number },
    private readonly observe?: () => ChunkObserver,
  ) {
    this.server = createServer((client) => {
      const upstream = createConnection(this.target);
      const observer = this.observe?.();
      this.forward(client, upstream, "up", observer);
      this.forward(upstream, client, "down", observer);
    });
  }

  /** Starts a proxy to `target` ("host:port") and resolves once it listens. */
  static async start(target: string, observe?: () => ChunkObserver): Promise<MeteredProxy> {
    const colon = target.lastIndexOf(":");
    const proxy = new MeteredProxy({ host: target.slice(0, colon), port: Number(target.slice(colon + 1)) }, observe);
    proxy.server.listen(0, "127.0.0.1");
    await once(proxy.server, "listening");
    const bound = proxy.server.address();
    proxy.address = `127.0.0.1:${typeof bound === "object" && bound ? bound.port : 0}`;
    return proxy;
  }

  /** Closes the listener and destroys every connection. */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private forward(from: Socket, to: Socket, direction: "up" | "down", observer?: ChunkObserver): void {
    this.sockets.add(from);
    const count = this[direction];
    from.on("data", (chunk: Buffer) => {
      count.bytes += chunk.length;
      count.chunks += 1;
      observer?.(direction, chunk);
      to.write(chunk);
    });
    from.on("end", () => to.end());
    from.on("error", () => {});
    from.on("close", () => {
      this.sockets.delete(from);
      to.destroy();
    });
  }
}
