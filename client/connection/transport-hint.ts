/**
 * What a failed connection's details most likely mean when TLS and plaintext are mixed up, for the
 * end of the message; undefined when they do not look like it. `secure` says whether this client
 * dialled TLS. OpenSSL's "wrong version number" (or "packet length too long") is a TLS client
 * reading a plaintext answer; a plaintext client on a TLS port sees the connection closed before
 * HTTP/2 starts, which grpc-js reports as "Failed to connect" or "Connection dropped".
 */
export function transportHint(details: string, secure: boolean): string | undefined {
  if (secure && /wrong version number|packet length too long|http request/i.test(details)) {
    return "this client uses TLS but the coordinator answered in plaintext: is it serving without TLS? (drop the client's TLS settings, or start it with --tls-cert and --tls-key)";
  }
  if (!secure && /Failed to connect|Connection dropped/i.test(details)) {
    return "this client uses plaintext: if the coordinator serves TLS (required off loopback), give the client its CA (tls: { ca }, CLI --tls-ca)";
  }
  return undefined;
}

/** `message` with the transport hint of `details` (see transportHint) appended, if there is one. */
export function withTransportHint(message: string, details: string, secure: boolean): string {
  const hint = transportHint(details, secure);
  return hint === undefined ? message : `${message} — ${hint}`;
}
