import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import { experimental, type ServerCredentials } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { SecurityFileError } from "./reloadable-file.js";
import { WatchedFile } from "./watched-file.js";

type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

/** The PEM files of the gRPC port's TLS: the server's certificate chain and key, and the client CA (mTLS). */
export interface TlsFiles {
  cert: string;
  key: string;
  /** With it, clients must present a certificate this CA signed. */
  clientCa?: string;
}

/**
 * The server's TLS certificates as a grpc-js certificate provider: read at start, re-read when a
 * file changes or on `reload()` (SIGHUP). grpc-js then swaps the listening socket's secure context:
 * new connections use the new certificates, open connections and their streams carry on. A set of
 * files that does not make a valid context (say, a key that does not match, mid-rotation) is
 * logged and ignored until the next change.
 */
export class TlsCertificates implements experimental.CertificateProvider {
  private current: { cert: Buffer; key: Buffer; ca?: Buffer };
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();
  private readonly watchers: WatchedFile[];

  /** Reads the files now; throws a SecurityFileError when they are unreadable or do not fit. */
  constructor(
    private readonly files: TlsFiles,
    private readonly log: Logger,
  ) {
    this.current = this.read();
    const paths = [files.cert, files.key, ...(files.clientCa ? [files.clientCa] : [])];
    this.watchers = paths.map((p) => new WatchedFile(p, () => this.reload()));
  }

  /** Server credentials that follow these certificates; they require client certificates when there is a client CA. */
  credentials(): ServerCredentials {
    // grpc-js passes its first two arguments on in the order (identity, CA), whatever their names say.
    const ca = this.files.clientCa ? this : null;
    return experimental.createCertificateProviderServerCredentials(this, ca, ca !== null);
  }

  /** Re-reads the files; true when the new certificates are in force. */
  reload(): boolean {
    try {
      this.current = this.read();
    } catch (err) {
      this.log.error({ err: (err as Error).message }, "TLS certificates not reloaded: keeping the last good ones");
      return false;
    }
    for (const l of this.identityListeners) l({ certificate: this.current.cert, privateKey: this.current.key });
    if (this.current.ca) for (const l of this.caListeners) l({ caCertificate: this.current.ca });
    this.log.info({ cert: this.files.cert }, "TLS certificates reloaded");
    return true;
  }

  /** Stops watching the files. */
  close(): void {
    for (const w of this.watchers) w.close();
  }

  // grpc-js registers its watcher only after adding these listeners, so the first certificates
  // must arrive after this call returns, not during it.
  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    queueMicrotask(() => this.current.ca && listener({ caCertificate: this.current.ca }));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    queueMicrotask(() => listener({ certificate: this.current.cert, privateKey: this.current.key }));
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
  }

  private read(): { cert: Buffer; key: Buffer; ca?: Buffer } {
    const load = (what: string, path: string) => {
      try {
        return readFileSync(path);
      } catch (err) {
        throw new SecurityFileError(`${what}: cannot read ${path} (${(err as NodeJS.ErrnoException).code})`);
      }
    };
    const cert = load("tls-cert", this.files.cert);
    const key = load("tls-key", this.files.key);
    const ca = this.files.clientCa ? load("tls-client-ca", this.files.clientCa) : undefined;
    try {
      createSecureContext({ cert, key, ca });
    } catch (err) {
      // OpenSSL's message names the problem (bad PEM, key mismatch); it never contains the key.
      throw new SecurityFileError(`tls-cert/tls-key: not a usable certificate and key: ${(err as Error).message}`);
    }
    return { cert, key, ca };
  }
}
