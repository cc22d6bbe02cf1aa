import type { Server } from "@grpc/grpc-js";
import type { Logger } from "pino";

/** At most one log line per kind of mismatch in this many ms; the next one counts those left out. */
export const MISMATCH_LOG_INTERVAL_MS = 10_000;

/** OpenSSL's codes for bytes that are not a TLS record (a plaintext client on a TLS port). */
const NOT_TLS = new Set(["ERR_SSL_WRONG_VERSION_NUMBER", "ERR_SSL_HTTP_REQUEST", "ERR_SSL_PACKET_LENGTH_TOO_LONG"]);

/** An http2 session, by its socket's address (gone from the socket once a session error destroyed it). */
type Peer = { socket?: { remoteAddress?: string } };

/** The http2 server events read here, as Node emits them. */
interface Http2Events {
  on(event: "session", listener: (session: Peer) => void): void;
  on(event: "sessionError", listener: (err: Error, session: Peer) => void): void;
  on(
    event: "tlsClientError",
    listener: (err: Error & { code?: string }, socket: { remoteAddress?: string }) => void,
  ): void;
}

/**
 * Logs a client that speaks the wrong transport to the gRPC port, which the client itself only sees
 * as OpenSSL's "wrong version number" or a bare "Failed to connect": a TLS client on a plaintext port
 * (its ClientHello is not the HTTP/2 preface) and a plaintext client on a TLS port (its preface is not
 * a TLS record). One warning per kind per MISMATCH_LOG_INTERVAL_MS, naming the peer and what to change.
 * It reads grpc-js's http2 servers (`http2Servers`, not public API); when a grpc-js upgrade hides them,
 * nothing is logged and test/security/transport-mismatch.test.ts fails.
 */
export function logTransportMismatches(server: Server, log: Logger): void {
  const servers = (server as unknown as { http2Servers?: Map<Http2Events, unknown> }).http2Servers;
  if (!(servers instanceof Map)) return;
  const tlsOnPlain = throttled(
    log,
    "a client sent TLS to this plaintext port (TLS client, coordinator without --tls-cert?): connect without TLS, or serve with --tls-cert and --tls-key",
  );
  const plainOnTls = throttled(
    log,
    "a client sent plaintext to this TLS port (plaintext client?): give the client the coordinator's CA (--tls-ca) so that it connects over TLS",
  );
  // Each session's peer, noted as it starts: its socket is destroyed by the time its error is told.
  const peers = new WeakMap<Peer, string | undefined>();
  for (const http2 of servers.keys()) {
    http2.on("session", (session) => peers.set(session, session.socket?.remoteAddress));
    http2.on("sessionError", (err, session) => {
      if (/bad client magic/i.test(err.message)) tlsOnPlain(peers.get(session), err.message);
    });
    http2.on("tlsClientError", (err, socket) => {
      if (err.code !== undefined && NOT_TLS.has(err.code)) plainOnTls(socket.remoteAddress, err.code);
    });
  }
}

/** A warning logged at most once per MISMATCH_LOG_INTERVAL_MS, with the count of those left out since. */
function throttled(log: Logger, msg: string): (peer: string | undefined, detail: string) => void {
  let lastMs = Number.NEGATIVE_INFINITY;
  let skipped = 0;
  return (peer, detail) => {
    const now = performance.now();
    if (now - lastMs < MISMATCH_LOG_INTERVAL_MS) {
      skipped++;
      return;
    }
    lastMs = now;
    log.warn({ peer: peer ?? "", detail, ...(skipped > 0 && { alsoSince: skipped }) }, msg);
    skipped = 0;
  };
}
