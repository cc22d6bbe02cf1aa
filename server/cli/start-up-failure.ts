import { StoreUnavailableError } from "../store/store-unavailable-error.js";

/** Exit codes of `turnstile serve`, as docs/operations.md ("Exit codes") lists them. */
export const ServeExit = {
  /** Stopped by SIGTERM or SIGINT after draining. */
  stopped: 0,
  /** Could not start: the store unreachable at start-up, or an unexpected error (stack logged). */
  failed: 1,
  /** Invalid settings (one line per error). */
  settings: 2,
  /** Cannot listen: the gRPC (--listen), metrics (--metrics) or web console (--http)
   * address is in use or not available. */
  listen: 3,
} as const;

/** One start-up failure, ready for one log line: what went wrong and the exit code it ends with. */
export interface StartUpFailure {
  exitCode: number;
  msg: string;
  /** Set for unexpected errors only, so their stack is logged. */
  err?: unknown;
  /** What to do about it, for the line on stderr (a port in use). */
  hint?: string;
}

const REASONS: Record<string, string> = {
  EADDRINUSE: "address already in use",
  EADDRNOTAVAIL: "address not available on this host",
  EACCES: "permission denied",
};

// What to do about each listen failure; the flag is the one that named the address.
const HINTS: Record<string, (flag: string) => string> = {
  EADDRINUSE: (flag) =>
    `another process listens there (a coordinator still running or draining?): stop it, or give ${flag} another port`,
  EADDRNOTAVAIL: (flag) => `give ${flag} an address of this host (0.0.0.0 for all, 127.0.0.1 for loopback)`,
  EACCES: (flag) => `ports below 1024 need privileges: give ${flag} a port of 1024 or above`,
};
const FLAGS: Record<string, string> = { gRPC: "--listen", metrics: "--metrics", "web console": "--http" };

/** Why listening on `address` (gRPC or metrics, named by `what`) failed. */
export function listenFailure(what: string, address: string, err: unknown): StartUpFailure {
  const text = err instanceof Error ? err.message : String(err);
  const code = Object.keys(REASONS).find((c) => (err as { code?: string }).code === c || text.includes(c));
  // grpc-js says "No address added out of total N resolved errors: [listen EADDRINUSE: ...]".
  const reason = code ? REASONS[code] : (/errors: \[(.*)\]$/.exec(text)?.[1] ?? text);
  const hint = code ? HINTS[code](FLAGS[what] ?? "the address") : undefined;
  return { exitCode: ServeExit.listen, msg: `cannot start: cannot listen on ${address} (${what}): ${reason}`, hint };
}

/** Why the coordinator could not start (its store, or its gRPC address). */
export function coordinatorFailure(listen: string, err: unknown): StartUpFailure {
  if (err instanceof StoreUnavailableError) return { exitCode: ServeExit.failed, msg: `cannot start: ${err.message}` };
  if (err instanceof Error && err.message.startsWith("No address added")) return listenFailure("gRPC", listen, err);
  return { exitCode: ServeExit.failed, msg: "cannot start: unexpected error", err };
}
