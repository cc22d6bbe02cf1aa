import { createServer, type RequestListener, type Server } from "node:http";

/**
 * A plain HTTP listener for the web console on its own address (`--http` different from
 * `--metrics`). `start` resolves with the bound port; `stop` ends every open stream.
 */
export class ConsoleHttpServer {
  private readonly server: Server;

  constructor(handler: RequestListener) {
    this.server = createServer(handler);
  }

  start(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        const address = this.server.address();
        resolve(typeof address === "object" && address ? address.port : port);
      });
    });
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
