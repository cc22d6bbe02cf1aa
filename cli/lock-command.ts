import { hostname } from "node:os";
import { type Lock, LostLockError, type ReleaseRequest, TurnstileClient, TurnstileError } from "../client/index.js";
import { LockExit } from "./exit-codes.js";
import { CONNECTION_HELP } from "./flags/connection-flags.js";
import { LOCK_LIMITS_HELP, type LockArgs, parseLockArgs } from "./flags/lock-args.js";
import { shownName, withoutName } from "./flags/lock-name.js";
import { refusedArgument } from "./flags/refused-argument.js";
import { GuardedCommand } from "./guarded-command.js";
import { blockersLine, currentHoldersLine } from "./output/holders-line.js";

const USAGE = `Usage: turnstile lock [options] NAME... -- COMMAND [ARGS...]

Acquires the exclusive lock NAME, runs COMMAND while holding it, releases it when COMMAND ends
and exits with COMMAND's exit code (128+N if a signal N ended it). COMMAND gets the lock's
fencing token in env TURNSTILE_FENCING_TOKEN, its signed fencing proof (empty when the coordinator
has no --fencing-key; docs/fencing.md) in TURNSTILE_FENCING_PROOF and its name in
TURNSTILE_LOCK_NAME. If the lock
is lost while COMMAND runs (lease not renewed in time, session ended), COMMAND gets SIGTERM,
then SIGKILL after --grace, and the exit code is 76.
With several NAMEs it acquires them all together or none (docs/multi-lock.md): COMMAND gets
TURNSTILE_FENCING_TOKENS="NAME=TOKEN,..." and TURNSTILE_FENCING_PROOFS="NAME=PROOF,..." in the
order given (",", "=" and "%" in a NAME percent-encoded), and the first NAME's token, proof and
name in the variables above.

Options:
${CONNECTION_HELP}
  --wait DURATION      how long to wait for the lock: 0 tries once (default: forever)
  --ttl DURATION       session lease; renewed every TTL/3 (default 15s)
  --grace DURATION     SIGTERM to SIGKILL when the lock is lost (default 5s)
  --lock-delay DURATION  after a hold ends without a release (lost, revoked), nobody gets NAME
                       for this long (default: the coordinator's --lock-delay for NAME; 0 none)
  --quiet              do not say on stderr that it waits, and behind whom
  --on-release-request SIGNAL  when someone asks the holder to let go (turnstile ask-release, a
                       candidate's request), send COMMAND this signal (e.g. SIGUSR1) and say who
                       asked and why on stderr; COMMAND decides (exit to release the lock)
  -h, --help           this help
DURATION is a number with a unit: 500ms, 10s, 5m, 1h.
${LOCK_LIMITS_HELP}

Exit codes: COMMAND's own; 2 bad usage; 69 coordinator unreachable or request refused;
75 not acquired within --wait; 76 lock lost (COMMAND stopped); 126/127 COMMAND not runnable/found.
SIGTERM and SIGHUP are passed on to COMMAND; SIGINT reaches it from the terminal.
`;

const CLOSE_TIMEOUT_MS = 3000;

/**
 * How long the Describe that names the holders after a refused acquire may take: it adds at most
 * this to --wait (the acquire's own answer usually names them and no Describe is made).
 */
const HOLDERS_TIMEOUT_MS = 2000;

/** `turnstile lock`: holds a lock while a command runs (like flock(1) or etcdctl lock). */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const dash = argv.indexOf("--");
  const own = dash >= 0 ? argv.slice(0, dash) : argv;
  if (own.includes("--help") || own.includes("-h")) {
    process.stdout.write(USAGE);
    return 0;
  }
  const args = parseLockArgs(own, dash >= 0 ? argv.slice(dash + 1) : [], env);
  if (typeof args === "string") return usageError(args);
  const client = new TurnstileClient(args.server, {
    ttlMs: args.ttlMs,
    clientName: `turnstile-lock@${hostname()}`,
    ...args.connection,
  });
  try {
    const held = await acquire(client, args);
    if (typeof held === "number") return held;
    return await runHolding(held, args, env, client);
  } finally {
    // Bounded: with the store unreachable the server cannot confirm the release in time.
    await client.close({ signal: AbortSignal.timeout(CLOSE_TIMEOUT_MS) }).catch(() => {});
  }
}

function usageError(message: string): number {
  process.stderr.write(`turnstile lock: ${message} (see turnstile lock --help)\n`);
  return LockExit.usage;
}

/** What the command runs under: one lock, or the set of several NAMEs; `signal` aborts when any is lost. */
interface Held {
  locks: readonly Lock[];
  signal: AbortSignal;
  release(): Promise<void>;
}

/** The NAMEs as messages show them. */
function shownNames(names: string[]): string {
  return names.map(shownName).join(", ");
}

/**
 * Acquires the lock (several NAMEs: all together), or says why not and returns the exit code. While
 * queued it says once on stderr behind whom it waits (unless --quiet). SIGINT/SIGTERM stop the wait.
 */
async function acquire(client: TurnstileClient, args: LockArgs): Promise<Held | number> {
  const interrupted = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => interrupted.abort(signal);
  for (const s of ["SIGINT", "SIGTERM"] as const) process.on(s, onSignal);
  let told = false;
  let settled = false;
  const onQueued = (position: number) => {
    if (told || args.quiet) return;
    told = true;
    void holdersOf(args).then((holders) => {
      // Not once the answer is in: a grant or a refusal says the rest.
      if (settled) return;
      const limit = args.waitMs === undefined ? "no time limit" : `up to ${args.waitText}`;
      process.stderr.write(
        `turnstile lock: waiting for ${shownNames(args.names)} (${limit}, queue position ${position}): ${holders}\n`,
      );
    });
  };
  try {
    const options = { waitMs: args.waitMs, lockDelayMs: args.lockDelayMs, signal: interrupted.signal, onQueued };
    if (args.names.length > 1) {
      const set = await client.acquireAll(args.names, options);
      return { locks: set.locks, signal: set.signal, release: () => set.release() };
    }
    const lock = await client.acquire(args.name, options);
    return { locks: [lock], signal: lock.signal, release: () => lock.release() };
  } catch (err) {
    if (interrupted.signal.aborted) return interrupted.signal.reason === "SIGINT" ? 130 : 143;
    return await acquireFailed(err, args);
  } finally {
    settled = true;
    for (const s of ["SIGINT", "SIGTERM"] as const) process.off(s, onSignal);
  }
}

/** The current holders of every NAME, for one line ("NAME: held by ..." per name when there are several). */
async function holdersOf(args: LockArgs): Promise<string> {
  const options = { callTimeoutMs: HOLDERS_TIMEOUT_MS };
  const lines = await Promise.all(args.names.map((n) => currentHoldersLine(args.server, args.connection, n, options)));
  return args.names.length === 1 ? lines[0] : lines.map((line, i) => `${shownName(args.names[i])}: ${line}`).join("; ");
}

/** Says why the acquire failed, naming the holders where it was refused for them; the exit code. */
async function acquireFailed(err: unknown, args: LockArgs): Promise<number> {
  const reason = err instanceof TurnstileError ? err.reason : "internal";
  const message = withoutName(err instanceof Error ? err.message : String(err), args.name);
  const name = shownNames(args.names);
  if (reason === "timeout" || reason === "busy") {
    const waited = args.waitMs ? `within ${args.waitText}` : "(tried once)";
    const blockers = (err as TurnstileError).blockedBy;
    const named = blockers.map((b) => ({ ...b, owner: b.name ? `${b.owner} on ${shownName(b.name)}` : b.owner }));
    const holders = blockersLine(named) ?? (await holdersOf(args));
    process.stderr.write(`turnstile lock: ${name} not acquired ${waited}: ${holders}\n`);
    return LockExit.notAcquired;
  }
  // A value this coordinator's limits refuse (the session's TTL is refused at Open): still a usage error.
  const refused =
    reason === "invalid-argument" || message.includes("INVALID_ARGUMENT") ? refusedArgument(message) : undefined;
  if (refused) return usageError(`${refused} (refused by ${args.server})`);
  // Unreachable says so first: nothing was queued, so nobody is said to hold NAME.
  const unreachable = reason === "connection" ? "coordinator unreachable: " : "";
  process.stderr.write(`turnstile lock: ${unreachable}cannot acquire ${name} from ${args.server}: ${message}\n`);
  return LockExit.unavailable;
}

/** Runs the command holding the lock(s); stops it if one is lost; releases them after. */
async function runHolding(
  held: Held,
  args: LockArgs,
  env: NodeJS.ProcessEnv,
  client: TurnstileClient,
): Promise<number> {
  const lostMessage = (action: string) => {
    const lost = held.locks.find((l) => l.lost) ?? held.locks[0];
    const why = held.signal.reason instanceof LostLockError ? held.signal.reason.lostReason : "lost";
    return `turnstile lock: lost ${shownName(lost.name)} (${why}): ${action}\n`;
  };
  if (held.signal.aborted) {
    process.stderr.write(lostMessage("the command was not started"));
    return LockExit.lost;
  }
  const command = new GuardedCommand(args.command, {
    ...env,
    TURNSTILE_FENCING_TOKEN: String(held.locks[0].fencingToken),
    TURNSTILE_LOCK_NAME: args.name,
    TURNSTILE_FENCING_TOKENS: tokensVariable(held.locks),
    TURNSTILE_FENCING_PROOF: held.locks[0].fencingProof,
    TURNSTILE_FENCING_PROOFS: proofsVariable(held.locks),
  });
  const onLost = () => {
    process.stderr.write(lostMessage(`stopping the command (SIGTERM, SIGKILL after ${args.graceMs} ms)`));
    command.stop(args.graceMs);
  };
  held.signal.addEventListener("abort", onLost, { once: true });
  const forward = args.onReleaseRequest;
  const onRequest = (request: ReleaseRequest) => {
    if (!forward) return;
    const reason = request.reason === "" ? "no reason given" : JSON.stringify(request.reason);
    process.stderr.write(
      `turnstile lock: ${request.requester} asks to release ${shownName(request.name)} (${reason}): sending ${forward}\n`,
    );
    command.signal(forward);
  };
  client.on("releaseRequested", onRequest);
  try {
    const end = await command.wait();
    return end.stopped ? LockExit.lost : end.code;
  } finally {
    held.signal.removeEventListener("abort", onLost);
    client.off("releaseRequested", onRequest);
    await held.release().catch(() => {});
  }
}

/** TURNSTILE_FENCING_TOKENS: "NAME=TOKEN" per lock, comma-separated, with ",", "=" and "%" in a NAME percent-encoded. */
export function tokensVariable(locks: readonly Lock[]): string {
  return locks.map((l) => `${encodeName(l.name)}=${l.fencingToken}`).join(",");
}

/** TURNSTILE_FENCING_PROOFS: "NAME=PROOF" per lock, encoded as TURNSTILE_FENCING_TOKENS (a proof has no "," or "="). */
export function proofsVariable(locks: readonly Lock[]): string {
  return locks.map((l) => `${encodeName(l.name)}=${l.fencingProof}`).join(",");
}

function encodeName(name: string): string {
  return name.replace(/[%,=]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
