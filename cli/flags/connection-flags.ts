import type { CredentialOptions } from "../../client/admin.js";
import { channelCredentials } from "../../client/admin.js";
import { type PemKind, pairProblem, readPem } from "./pem-files.js";
import { serverAddress } from "./server-address.js";

/** The flags every command that talks to a coordinator takes: its address, TLS, mTLS and bearer tokens. */
export const CONNECTION_FLAGS = ["server", "tls-ca", "tls-cert", "tls-key", "token"] as const;

type ConnectionFlag = Exclude<(typeof CONNECTION_FLAGS)[number], "server">;

// The CLI's own names: `serve` reads TURNSTILE_TLS_CERT/_KEY for the server's certificate, so a shell
// set up for the CLI never starts a coordinator with a client certificate, nor the other way round.
const ENV: Record<ConnectionFlag, string> = {
  "tls-ca": "TURNSTILE_CLIENT_TLS_CA",
  "tls-cert": "TURNSTILE_CLIENT_TLS_CERT",
  "tls-key": "TURNSTILE_CLIENT_TLS_KEY",
  token: "TURNSTILE_TOKEN",
};

/** Their lines in a command's --help. */
export const CONNECTION_HELP = `  --server HOST[:PORT] coordinator (env TURNSTILE_SERVER, default 127.0.0.1:7420; port 7420 if left out)
  --tls-ca FILE        connect over TLS, trusting this CA's PEM (env ${ENV["tls-ca"]})
  --tls-cert FILE      client certificate for mTLS, with --tls-key (env ${ENV["tls-cert"]})
  --tls-key FILE       its private key (env ${ENV["tls-key"]})
  --token TOKEN        bearer token; needs --tls-ca (env ${ENV.token}; never logged)`;

/** Where and how to connect: the coordinator's HOST:PORT and the channel's credentials. */
export interface Connection {
  server: string;
  connection: CredentialOptions;
}

const KINDS: Record<Exclude<ConnectionFlag, "token">, PemKind> = {
  "tls-ca": "ca",
  "tls-cert": "cert",
  "tls-key": "key",
};

/**
 * The coordinator address and connection options from the flags (or their env vars): PEM files are
 * read and checked now, so a missing or wrong file is a usage error naming the flag and the file.
 * Returns one line saying what is wrong instead (never the token).
 */
export function connectionOptions(values: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv) {
  const address = serverAddress(values.server as string | undefined, env);
  if (typeof address === "string") return address;
  const get = (flag: ConnectionFlag) => (values[flag] as string | undefined) ?? (env[ENV[flag]] || undefined);
  const named = (flag: ConnectionFlag) => (values[flag] !== undefined ? `--${flag}` : `--${flag} (env ${ENV[flag]})`);
  const files: Partial<Record<keyof typeof KINDS, string>> = {};
  for (const flag of ["tls-ca", "tls-cert", "tls-key"] as const) {
    const path = get(flag);
    if (path === undefined) continue;
    const read = readPem(named(flag), path, KINDS[flag]);
    if (typeof read === "string") return read;
    files[flag] = read.pem;
  }
  const token = get("token");
  if ((files["tls-cert"] === undefined) !== (files["tls-key"] === undefined))
    return "--tls-cert and --tls-key go together: give both or neither";
  if ((files["tls-cert"] !== undefined || token !== undefined) && files["tls-ca"] === undefined)
    return `${token !== undefined ? "--token" : "--tls-cert"} needs TLS: give --tls-ca too`;
  if (files["tls-cert"] !== undefined && files["tls-key"] !== undefined) {
    const mismatch = pairProblem(files["tls-cert"], files["tls-key"]);
    if (mismatch) return `--tls-cert ${get("tls-cert")} and --tls-key ${get("tls-key")}: ${mismatch}`;
  }
  const connection: CredentialOptions =
    files["tls-ca"] === undefined
      ? {}
      : { tls: { ca: files["tls-ca"], cert: files["tls-cert"], key: files["tls-key"] }, token };
  try {
    channelCredentials(connection);
  } catch (err) {
    return `--tls-cert/--tls-key/--token: ${(err as Error).message}`;
  }
  return { server: address.server, connection } satisfies Connection;
}
