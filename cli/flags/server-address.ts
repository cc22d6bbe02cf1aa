/** The coordinator's port when `--server` (or TURNSTILE_SERVER) names a host only. */
export const DEFAULT_PORT = 7420;

/** `--server`'s default when neither the flag nor TURNSTILE_SERVER is set. */
export const DEFAULT_SERVER = `127.0.0.1:${DEFAULT_PORT}`;

/**
 * The coordinator address from `--server` or env TURNSTILE_SERVER: HOST:PORT, [IPv6]:PORT, or a
 * host alone, which means port 7420 (never gRPC's own default of 443). Returns one line naming the
 * flag and the value instead when it is not an address.
 */
export function serverAddress(flag: string | undefined, env: NodeJS.ProcessEnv): { server: string } | string {
  const fromEnv = flag === undefined && Boolean(env.TURNSTILE_SERVER);
  const text = flag ?? (env.TURNSTILE_SERVER || DEFAULT_SERVER);
  const source = fromEnv ? "env TURNSTILE_SERVER" : "--server";
  const hostPort = /^(\[[0-9a-fA-F:.]+\]|[^\s:/[\]]+)(?::(\d{1,5}))?$/.exec(text);
  if (!hostPort) return `${source} must be HOST or HOST:PORT (e.g. 127.0.0.1:${DEFAULT_PORT}), got "${text}"`;
  const port = hostPort[2] === undefined ? DEFAULT_PORT : Number(hostPort[2]);
  if (port < 1 || port > 65535) return `${source}: port ${port} is outside 1..65535 in "${text}"`;
  return { server: `${hostPort[1]}:${port}` };
}
