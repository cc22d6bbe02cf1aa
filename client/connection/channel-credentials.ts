import { isIP } from "node:net";
import { type ChannelCredentials, credentials as grpc, Metadata } from "@grpc/grpc-js";
import { TurnstileError } from "../turnstile-error.js";

/** TLS to the coordinator: PEM text (not file names) of the CA to trust, and the client's own pair for mTLS. */
export interface TlsOptions {
  /** CA certificate(s) that signed the coordinator's certificate; default: the system's CAs. */
  ca?: string | Buffer;
  /** Client certificate chain (mTLS); goes with `key`. */
  cert?: string | Buffer;
  /** Private key of `cert`. */
  key?: string | Buffer;
}

/** How a client authenticates: explicit credentials, or TLS options and/or a bearer token. */
export interface CredentialOptions {
  credentials?: ChannelCredentials;
  tls?: TlsOptions;
  token?: string;
}

/**
 * The channel credentials for `options`: `credentials` as given; otherwise TLS with `tls` (and a
 * client certificate for mTLS), with `token` sent as `authorization: Bearer` on every call;
 * otherwise plaintext. Throws a TurnstileError ('invalid-argument') for a token without TLS
 * (grpc-js never sends call credentials in plaintext), or a cert without its key.
 */
export function channelCredentials(options: CredentialOptions): ChannelCredentials {
  const { credentials, tls, token } = options;
  if (credentials) {
    if (tls || token !== undefined) {
      throw new TurnstileError("invalid-argument", "credentials: give either credentials or tls/token, not both");
    }
    return credentials;
  }
  if (token !== undefined && !tls) {
    throw new TurnstileError("invalid-argument", "token: a bearer token needs TLS (set tls, e.g. tls: { ca })");
  }
  if (token !== undefined && !/^[\x21-\x7e]+$/.test(token)) {
    throw new TurnstileError("invalid-argument", "token: must be printable ASCII without spaces");
  }
  if (!tls) return grpc.createInsecure();
  if ((tls.cert === undefined) !== (tls.key === undefined)) {
    throw new TurnstileError("invalid-argument", "tls: cert and key go together: give both or neither");
  }
  const pem = (v: string | Buffer | undefined) => (v === undefined ? null : Buffer.from(v));
  const channel = withoutIpServername(grpc.createSsl(pem(tls.ca), pem(tls.key), pem(tls.cert)));
  if (token === undefined) return channel;
  const bearer = grpc.createFromMetadataGenerator((_params, callback) => {
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${token}`);
    callback(null, metadata);
  });
  return grpc.combineChannelCredentials(channel, bearer);
}

/** What grpc-js's TLS connector keeps of the options it passes to `tls.connect` (grpc-js 1.14). */
interface TlsConnector {
  connectionOptions?: { servername?: string };
}

/**
 * `credentials` that send no SNI server name for an IP address: grpc-js sets `servername` to the
 * target's host, and for an IP Node then prints DEP0123 into the application's stderr (RFC 6066
 * allows host names only). Without it Node verifies the certificate against the IP (`host`), as
 * before. For a host name nothing changes.
 */
function withoutIpServername(credentials: ChannelCredentials): ChannelCredentials {
  const create = credentials._createSecureConnector.bind(credentials);
  credentials._createSecureConnector = (target, options, callCredentials) => {
    const connector = create(target, options, callCredentials);
    const tls = (connector as TlsConnector).connectionOptions;
    if (tls?.servername !== undefined && isIP(tls.servername) !== 0) delete tls.servername;
    return connector;
  };
  return credentials;
}
