import { readFileSync } from "node:fs";
import { type CredentialOptions, channelCredentials } from "../client/admin.js";

/** The flags every command that talks to a coordinator takes for TLS, mTLS and bearer tokens. */
export const CONNECTION_FLAGS = ["tls-ca", "tls-cert", "tls-key", "token"] as const;

/** Their lines in a command's --help. */
export const CONNECTION_HELP = `  --tls-ca FILE        connect over TLS, trusting this CA's PEM (env TURNSTILE_TLS_CA)
  --tls-cert FILE      client certificate for mTLS, with --tls-key (env TURNSTILE_TLS_CERT)
  --tls-key FILE       its private key (env TURNSTILE_TLS_KEY)
  --token TOKEN        bearer token; needs --tls-ca (env TURNSTILE_TOKEN; never logged)`;

const ENV: Record<(typeof CONNECTION_FLAGS)[number], string> = {
  "tls-ca": "TURNSTILE_TLS_CA",
  "tls-cert": "TURNSTILE_TLS_CERT",
  "tls-key": "TURNSTILE_TLS_KEY",
  token: "TURNSTILE_TOKEN",
};

/**
 * The connection options from the flags (or their env vars): PEM files read now, so a missing file
 * is a usage error naming the flag. Returns one line saying what is wrong instead (never the token).
 */
export function connectionOptions(
  values: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv,
): CredentialOptions | string {
  const get = (flag: (typeof CONNECTION_FLAGS)[number]) =>
    (values[flag] as string | undefined) ?? (env[ENV[flag]] || undefined);
  const files: Record<string, string | undefined> = {};
  for (const flag of ["tls-ca", "tls-cert", "tls-key"] as const) {
    const path = get(flag);
    if (path === undefined) continue;
    try {
      files[flag] = readFileSync(path, "utf8");
    } catch (err) {
      return `--${flag}: cannot read ${path} (${(err as NodeJS.ErrnoException).code})`;
    }
  }
  const token = get("token");
  if ((files["tls-cert"] === undefined) !== (files["tls-key"] === undefined))
    return "--tls-cert and --tls-key go together: give both or neither";
  if ((files["tls-cert"] !== undefined || token !== undefined) && files["tls-ca"] === undefined)
    return `${token !== undefined ? "--token" : "--tls-cert"} needs TLS: give --tls-ca too`;
  const options: CredentialOptions =
    files["tls-ca"] === undefined
      ? {}
      : { tls: { ca: files["tls-ca"], cert: files["tls-cert"], key: files["tls-key"] }, token };
  try {
    channelCredentials(options);
  } catch (err) {
    return `--tls-cert/--tls-key/--token: ${(err as Error).message}`;
  }
  return options;
}
