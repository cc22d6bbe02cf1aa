import type { PeerCertificate } from "node:tls";
import type { Metadata } from "@grpc/grpc-js";
import type { TokenFile } from "./token-file.js";

/** The parts of a grpc-js server call that identify its caller. */
export interface CallerCredentials {
  readonly metadata: Metadata;
  getAuthContext(): { sslPeerCertificate?: PeerCertificate };
}

/** Who a call comes from: an identity, nobody (no credentials), or a bearer token that is not valid. */
export type CallerIdentity = { kind: "identity"; identity: string } | { kind: "none" } | { kind: "bad-token" };

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Identifies the caller from what the transport proved, never from a header a proxy could add: a
 * bearer token (only when a token file is in force) must be one of its tokens; otherwise a client
 * certificate that TLS verified names the caller by its first URI SAN, else first DNS SAN, else CN.
 */
export function callerIdentity(call: CallerCredentials, tokens: TokenFile | undefined): CallerIdentity {
  if (tokens) {
    const header = call.metadata.get("authorization")[0];
    if (header !== undefined) {
      const token = typeof header === "string" ? BEARER.exec(header)?.[1] : undefined;
      const identity = token === undefined ? undefined : tokens.identityOf(token);
      return identity === undefined ? { kind: "bad-token" } : { kind: "identity", identity };
    }
  }
  // grpc-js reports a peer certificate only for a socket TLS verified against the client CA.
  const cert = call.getAuthContext().sslPeerCertificate;
  const identity = cert && certificateIdentity(cert);
  return identity ? { kind: "identity", identity } : { kind: "none" };
}

/** The identity a client certificate names: its first URI SAN, else its first DNS SAN, else its CN. */
export function certificateIdentity(cert: PeerCertificate): string | undefined {
  const sans = subjectAltNames(cert.subjectaltname ?? "");
  const uri = sans.find((s) => s.type === "URI");
  const dns = sans.find((s) => s.type === "DNS");
  const cn = Array.isArray(cert.subject?.CN) ? cert.subject.CN[0] : cert.subject?.CN;
  return uri?.value || dns?.value || cn || undefined;
}

/** Node's `subjectaltname` text ("DNS:a, URI:b"; values with commas or quotes come JSON-quoted). */
function subjectAltNames(text: string): { type: string; value: string }[] {
  const found: { type: string; value: string }[] = [];
  for (const m of text.matchAll(/(?:^|, )([A-Za-z ]+):("(?:[^"\\]|\\.)*"|[^,]*)/g)) {
    const value = m[2].startsWith('"') ? (JSON.parse(m[2]) as string) : m[2];
    found.push({ type: m[1], value });
  }
  return found;
}
