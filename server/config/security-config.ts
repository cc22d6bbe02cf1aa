import { accessSync, constants } from "node:fs";
import { isIP } from "node:net";
import type { SecuritySettings } from "../security/security.js";
import type { HostPort, SettingValue } from "./setting-value.js";

/**
 * Checks the security settings together and builds them: --tls-cert and --tls-key go together,
 * --tls-client-ca needs them, --policy needs a source of identities (--tls-client-ca or
 * --token-file), every file is readable, a non-loopback --listen needs TLS or --insecure, and
 * the web console's rules hold (see `consoleRules`). Pushes one line per problem onto `errors`.
 */
export function securityConfig(values: Map<string, SettingValue>, errors: string[]): SecuritySettings {
  const path = (key: string) => values.get(key) as string | undefined;
  for (const key of ["tls-cert", "tls-key", "tls-client-ca", "token-file", "policy"]) {
    const file = path(key);
    if (file === undefined) continue;
    try {
      accessSync(file, constants.R_OK);
    } catch (err) {
      errors.push(`${key}: cannot read ${file} (${(err as NodeJS.ErrnoException).code})`);
    }
  }
  const [cert, key, clientCa] = [path("tls-cert"), path("tls-key"), path("tls-client-ca")];
  if ((cert === undefined) !== (key === undefined))
    errors.push("tls-key: --tls-cert and --tls-key go together: set both or neither");
  if (clientCa !== undefined && cert === undefined)
    errors.push("tls-client-ca: client certificates need TLS: set --tls-cert and --tls-key too");
  if (path("policy") !== undefined && clientCa === undefined && path("token-file") === undefined)
    errors.push("policy: a policy needs identities: set --tls-client-ca (mTLS) or --token-file");
  const listen = values.get("listen") as HostPort;
  if (cert === undefined && !values.get("insecure") && !isLoopback(listen.host))
    errors.push(
      `listen: ${listen.host} is not a loopback address and there is no TLS: set --tls-cert and --tls-key, or --insecure to serve plaintext anyway`,
    );
  consoleRules(values, cert !== undefined, errors);
  return {
    tls: cert !== undefined && key !== undefined ? { cert, key, clientCa } : undefined,
    tokenFile: path("token-file"),
    policyFile: path("policy"),
  };
}

/** True for localhost, 127.0.0.0/8 and ::1 (also as ::ffff:127.x.y.z): nobody else can connect there. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  if (h === "localhost") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) !== 6) return false;
  // The URL parser writes IPv6 addresses in their shortest form (and v4-mapped ones in hex).
  const short = new URL(`http://[${h}]/`).hostname;
  return short === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(short);
}

/**
 * The web console (`--http`) is as safe as the gRPC port: with no security settings it has no
 * access control, so loopback only; with them it names callers by bearer token (so it needs the
 * token file when identities are required), serves HTTPS with the gRPC port's certificate (so it
 * cannot share the plain-HTTP metrics listener), and a non-loopback address needs TLS or --insecure.
 */
function consoleRules(values: Map<string, SettingValue>, tls: boolean, errors: string[]): void {
  const http = values.get("http") as HostPort | "off" | undefined;
  if (http === undefined || http === "off") return;
  const has = (key: string) => values.get(key) !== undefined;
  const secured = tls || has("token-file") || has("policy");
  if (!secured && !isLoopback(http.host))
    errors.push(
      `http: ${http.host} is not a loopback address and the console has no access control without security settings: set --token-file and --policy (docs/security.md), or listen on 127.0.0.1`,
    );
  else if (secured && !tls && !values.get("insecure") && !isLoopback(http.host))
    errors.push(
      `http: ${http.host} is not a loopback address and there is no TLS: set --tls-cert and --tls-key (the console then serves HTTPS), or --insecure to serve plaintext anyway`,
    );
  if (has("tls-client-ca") && !has("token-file"))
    errors.push(
      "http: the console names its callers by bearer token only: set --token-file (certificates are for gRPC)",
    );
  const metrics = values.get("metrics") as HostPort | "off" | undefined;
  if (tls && metrics && metrics !== "off" && metrics.host === http.host && metrics.port === http.port)
    errors.push("http: with TLS the console serves HTTPS and metrics stay plain HTTP: give --http its own address");
}
