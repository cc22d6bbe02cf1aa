import { createServer, type RequestListener, type Server } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { experimental } from "@grpc/grpc-js";
import { closeHttp, listenHttp } from "../metrics/http-listen.js";

/** Where an HTTPS console takes its certificate and key from, and their replacements (a rotation). */
export type ConsoleCertificates = Pick<
  experimental.CertificateProvider,
  "addIdentityCertificateListener" | "removeIdentityCertificateListener"
>;

/**
 * A listener for the web console on its own address (`--http` different from `--metrics`): plain
 * HTTP, or HTTPS with `certificates` (the gRPC port's, swapped in when they are re-read: new
 * connections get the new ones). `start` resolves with the bound port; `stop` ends every open stream.
 */
export class ConsoleHttpServer {
  private readonly server: Server | HttpsServer;
  private readonly onCertificates?: experimental.IdentityCertificateUpdateListener;

  constructor(
    handler: RequestListener,
    private readonly certificates?: ConsoleCertificates,
  ) {
    if (!certificates) {
      this.server = createServer(handler);
      return;
    }
    const server = createHttpsServer({ minVersion: "TLSv1.2" }, handler);
    this.onCertificates = (update) =>
      update && server.setSecureContext({ cert: update.certificate, key: update.privateKey });
    certificates.addIdentityCertificateListener(this.onCertificates);
    this.server = server;
  }

  /** True when this listener serves HTTPS. */
  get secure(): boolean {
    return this.certificates !== undefined;
  }

  start(host: string, port: number): Promise<number> {
    return listenHttp(this.server, host, port);
  }

  stop(): Promise<void> {
    if (this.onCertificates) this.certificates?.removeIdentityCertificateListener(this.onCertificates);
    return closeHttp(this.server);
  }
}
