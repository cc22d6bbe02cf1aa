import { once } from "node:events";
import { createServer, type Server, type Socket } from "node:net";

/**
 * A TCP server on a free loopback port that accepts every connection and never writes a byte: a
 * coordinator that accepts and never answers, as a blackholed or wedged one looks to a client.
 * `accepted` counts connections it took.
 */
export class SilentServer {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  accepted = 0;
  address = "";

  private constructor() {
    this.#server = createServer((socket) => {
      this.accepted += 1;
      this.#sockets.add(socket);
      // Read and drop: the peer's writes never back up, its close is seen.
      socket.resume();
      socket.on("error", () => {});
      socket.once("close", () => this.#sockets.delete(socket));
    });
  }

  /** Starts one and resolves once it listens. */
  static async start(): Promise<SilentServer> {
    const silent = new SilentServer();
    silent.#server.listen(0, "127.0.0.1");
    await once(silent.#server, "listening");
    const bound = silent.#server.address();
    silent.address = `127.0.0.1:${typeof bound === "object" && bound ? bound.port : 0}`;
    return silent;
  }

  /** Destroys every accepted socket and stops listening. */
  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    this.#server.close();
    await once(this.#server, "close");
  }
}
