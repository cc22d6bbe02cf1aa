import type { Server } from "node:http";
import type { Server as HttpsServer } from "node:https";

/**
 * Binds an HTTP(S) server to `host:port` (port 0 picks a free one) and resolves with the bound
 * port; rejects with the listen error (e.g. EADDRINUSE) instead of letting it escape as an event.
 */
export function listenHttp(server: Server | HttpsServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

/** Closes an HTTP(S) server, ending its open connections (long-lived streams included) at once. */
export function closeHttp(server: Server | HttpsServer): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
