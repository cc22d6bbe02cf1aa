import { hostname } from "node:os";
import { parseArgs } from "node:util";
import type { CredentialOptions } from "../client/admin.js";
import { type Lock, LostLockError, TurnstileClient, TurnstileError } from "../client/index.js";
import { parseDurationText } from "../wire/duration-text.js";
import { CONNECTION_FLAGS, CONNECTION_HELP, connectionOptions } from "./connection-flags.js";
import { LockExit } from "./exit-codes.js";
import { GuardedCommand } from "./guarded-command.js";
import { joinNegativeValues } from "./negative-values.js";

const USAGE = `Usage: turnstile lock [options] NAME -- COMMAND [ARGS...]

Acquires the exclusive lock NAME, runs COMMAND while holding it, releases it when COMMAND ends
and exits with COMMAND's exit code (128+N if a signal N ended it). COMMAND gets the lock's
fencing token in env TURNSTILE_FENCING_TOKEN and its name in TURNSTILE_LOCK_NAME. If the lock
is lost while COMMAND runs (lease not renewed in time, session ended), COMMAND gets SIGTERM,
then SIGKILL after --grace, and the exit code is 76.

Options:
  --server HOST:PORT   coordinator (env TURNSTILE_SERVER, default 127.0.0.1:7420)
${CONNECTION_HELP}
  --wait DURATION      how long to wait for the lock: 0 tries once (default: forever)
  --ttl DURATION       session lease; renewed every TTL/3 (default 15s)
  --grace DURATION     SIGTERM to SIGKILL when the lock is lost (default 5s)
  -h, --help           this help
DURATION is a number with a unit: 500ms, 10s, 5m, 1h.

Exit codes: COMMAND's own; 2 bad usage; 69 coordinator unreachable or request refused;
75 not acquired within --wait; 76 lock lost (COMMAND stopped); 126/127 COMMAND not runnable/found.
SIGTERM and SIGHUP are passed on to COMMAND; SIGINT reaches it from the terminal.
`;

const CLOSE_TIMEOUT_MS = 3000;

interface LockArgs {
  server: string;
  connection: CredentialOptions;
  name: string;
  command: string[];
  waitMs?: number;
  /** --wait as given, for messages. */
  waitText?: string;
  ttlMs: number;
  graceMs: number;
}

/** `turnstile lock`: holds a lock while a command runs (like flock(1) or etcdctl lock). */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const dash = argv.indexOf("--");
  const own = dash >= 0 ? argv.slice(0, dash) : argv;
  if (own.includes("--help") || own.includes("-h")) {
    process.stdout.write(USAGE);
    return 0;
  }
  const args = parseLockArgs(own, dash >= 0 ? argv.slice(dash + 1) : [], env);
  if (typeof args === "string") {
    process.stderr.write(`turnstile lock: ${args} (see turnstile lock --help)\n`);
    return LockExit.usage;
  }
  const client = new TurnstileClient(args.server, {
    ttlMs: args.ttlMs,
    clientName: `turnstile-lock@${hostname()}`,
    ...args.connection,
  });
  try {
    const lock = await acquire(client, args);
    if (typeof lock === "number") return lock;
    return await runHolding(lock, args, env);
  } finally {
    // Bounded: with the store unreachable the server cannot confirm the release in time.
    await client.close({ signal: AbortSignal.timeout(CLOSE_TIMEOUT_MS) }).catch(() => {});
  }
}

function parseLockArgs(own: string[], command: string[], env: NodeJS.ProcessEnv): LockArgs | string {
  let parsed: ReturnType<typeof parseArgs<{ options: Record<string, { type: "string" }>; allowPositionals: true }>>;
  try {
    const options: Record<string, { type: "string" }> = {};
    for (const flag of ["server", "wait", "ttl", "grace", ...CONNECTION_FLAGS]) options[flag] = { type: "string" };
    parsed = parseArgs({ args: joinNegativeValues(own, Object.keys(options)), options, allowPositionals: true });
  } catch (err) {
    return (err as Error).message.split(". ")[0];
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) return `give one lock NAME before --, got ${positionals.length}`;
  if (command.length === 0) return "give the command after --, e.g. turnstile lock deploy -- make deploy";
  const durations: Record<string, number | undefined> = {};
  for (const [flag, fallback] of [
    ["wait", undefined],
    ["ttl", "15s"],
    ["grace", "5s"],
  ] as const) {
    const text = values[flag] ?? fallback;
    if (text === undefined) continue;
    if (/^\s*-/.test(text)) return negativeDuration(flag, text);
    durations[flag] = parseDurationText(text);
    if (durations[flag] === undefined) return `--${flag} "${text}" is not a duration (e.g. 500ms, 10s, 5m)`;
  }
  if (durations.ttl === 0) return "--ttl must be more than 0";
  const connection = connectionOptions(values, env);
  if (typeof connection === "string") return connection;
  return {
    connection,
    server: values.server ?? (env.TURNSTILE_SERVER || "127.0.0.1:7420"),
    name: positionals[0],
    command,
    waitMs: durations.wait,
    waitText: values.wait,
    ttlMs: durations.ttl!,
    graceMs: durations.grace!,
  };
}

/** Acquires the lock, or says why not and returns the exit code. SIGINT/SIGTERM stop the wait. */
async function acquire(client: TurnstileClient, args: LockArgs): Promise<Lock | number> {
  const interrupted = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => interrupted.abort(signal);
  for (const s of ["SIGINT", "SIGTERM"] as const) process.on(s, onSignal);
  try {
    return await client.acquire(args.name, { waitMs: args.waitMs, signal: interrupted.signal });
  } catch (err) {
    if (interrupted.signal.aborted) return interrupted.signal.reason === "SIGINT" ? 130 : 143;
    const reason = err instanceof TurnstileError ? err.reason : "internal";
    const message = err instanceof Error ? err.message : String(err);
    if (reason === "timeout" || reason === "busy") {
      const waited = args.waitMs ? `within ${args.waitText}` : "(tried once)";
      process.stderr.write(`turnstile lock: "${args.name}" not acquired ${waited}: another session holds it\n`);
      return LockExit.notAcquired;
    }
    process.stderr.write(`turnstile lock: cannot acquire "${args.name}" from ${args.server}: ${message}\n`);
    return LockExit.unavailable;
  } finally {
    for (const s of ["SIGINT", "SIGTERM"] as const) process.off(s, onSignal);
  }
}

/** Runs the command holding the lock; stops it if the lock is lost; releases the lock after. */
async function runHolding(lock: Lock, args: LockArgs, env: NodeJS.ProcessEnv): Promise<number> {
  const lostMessage = (action: string) => {
    const why = lock.signal.reason instanceof LostLockError ? lock.signal.reason.lostReason : "lost";
    return `turnstile lock: lost "${args.name}" (${why}): ${action}\n`;
  };
  if (lock.signal.aborted) {
    process.stderr.write(lostMessage("the command was not started"));
    return LockExit.lost;
  }
  const command = new GuardedCommand(args.command, {
    ...env,
    TURNSTILE_FENCING_TOKEN: String(lock.fencingToken),
    TURNSTILE_LOCK_NAME: args.name,
  });
  const onLost = () => {
    process.stderr.write(lostMessage(`stopping the command (SIGTERM, SIGKILL after ${args.graceMs} ms)`));
    command.stop(args.graceMs);
  };
  lock.signal.addEventListener("abort", onLost, { once: true });
  try {
    const end = await command.wait();
    return end.stopped ? LockExit.lost : end.code;
  } finally {
    lock.signal.removeEventListener("abort", onLost);
    await lock.release().catch(() => {});
  }
}

function negativeDuration(flag: string, text: string): string {
  const rules: Record<string, string> = {
    wait: "0 or more: 0 tries once, leave --wait out to wait forever",
    ttl: "more than 0",
  };
  const rule = rules[flag] ?? "0 or more";
  return `--${flag} "${text}" is negative: a duration must be ${rule} (e.g. 500ms, 10s, 5m)`;
}
