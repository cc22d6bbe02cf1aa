import { constants } from "node:os";
import { parseArgs } from "node:util";
import type { CredentialOptions } from "../../client/admin.js";
import { formatDurationText, parseDurationText } from "../../wire/duration-text.js";
import { MAX_TIMER_MS, MAX_TIMER_TEXT } from "../../wire/max-timer-ms.js";
import { joinNegativeValues } from "../../wire/negative-values.js";
import { REQUEST_LIMITS } from "../../wire/request-limits.js";
import { CONNECTION_FLAGS, connectionOptions } from "./connection-flags.js";
import { nameProblem } from "./lock-name.js";

/** What `turnstile lock` was asked to do, checked against what the coordinator accepts. */
export interface LockArgs {
  server: string;
  connection: CredentialOptions;
  /** The first NAME (the only one for a single lock). */
  name: string;
  /** Every NAME, in the order given: several are acquired together (acquireAll). */
  names: string[];
  command: string[];
  waitMs?: number;
  /** --wait as given, for messages. */
  waitText?: string;
  ttlMs: number;
  graceMs: number;
  /** --lock-delay: the holds' lock-delay (undefined: the coordinator's default for the name). */
  lockDelayMs?: number;
  /** --quiet: no line saying that it waits. */
  quiet: boolean;
  /** --on-release-request: the signal COMMAND gets when someone asks the holder to let go (undefined: none). */
  onReleaseRequest?: NodeJS.Signals;
}

const { minTtlMs, maxTtlMs, maxWaitMs, maxLockDelayMs, maxNameBytes, maxSetNames } = REQUEST_LIMITS;
const shown = (ms: number) => (ms === 0 ? "0" : formatDurationText(ms));
const range = (minMs: number, maxMs: number) => `${shown(minMs)}..${shown(maxMs)}`;

/**
 * The duration flags, their defaults, the range any coordinator could accept and what a value
 * means. The TTL and wait limits a coordinator may change (serve --min-ttl, --max-ttl, --max-wait)
 * are its own to check: its refusal names them. Each bound here is one nothing can exceed: a timer's
 * (leases and waits reach timers, so does the SIGKILL), or the wire's fixed lock-delay.
 */
const DURATIONS = {
  wait: { fallback: undefined, minMs: 0, maxMs: MAX_TIMER_MS, rule: "0 tries once, leave --wait out to wait forever" },
  ttl: { fallback: "15s", minMs: 1, maxMs: MAX_TIMER_MS, rule: "the session lease" },
  grace: { fallback: "5s", minMs: 0, maxMs: MAX_TIMER_MS, rule: "SIGTERM to SIGKILL" },
  "lock-delay": {
    fallback: undefined,
    minMs: 0,
    maxMs: maxLockDelayMs,
    rule: "no new holder for this long after a hold ends without a release",
  },
} as const;

/** The help lines of the limits, for the usage text. */
export const LOCK_LIMITS_HELP = `Limits: --ttl, --wait and --grace at most ${MAX_TIMER_TEXT}, --lock-delay at most ${formatDurationText(maxLockDelayMs)},
NAME not empty and without control characters, at most ${maxSetNames} NAMEs. The coordinator checks
its own limits (by default --ttl ${range(minTtlMs, maxTtlMs)}, --wait at most ${formatDurationText(maxWaitMs)}, NAME at most ${maxNameBytes}
bytes of UTF-8): a value it refuses is exit 2 too, naming the flag and its limit.`;

/**
 * Parses `turnstile lock`'s own arguments (before `--`) and the command (after it). A value no
 * coordinator accepts (negative, not a duration, above the longest timer or the wire's fixed
 * lock-delay bound, an empty name) is refused here: one line naming the flag, the value and the
 * limit. Limits a coordinator may change are left to it (lock-command.ts reports its refusal).
 */
export function parseLockArgs(own: string[], command: string[], env: NodeJS.ProcessEnv): LockArgs | string {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    const options: Record<string, { type: "string" | "boolean" }> = { quiet: { type: "boolean" } };
    for (const flag of ["wait", "ttl", "grace", "lock-delay", "on-release-request", ...CONNECTION_FLAGS]) {
      options[flag] = { type: "string" };
    }
    const strings = Object.keys(options).filter((flag) => flag !== "quiet");
    parsed = parseArgs({ args: joinNegativeValues(own, strings), options, allowPositionals: true });
  } catch (err) {
    return (err as Error).message.split(". ")[0];
  }
  const { values, positionals } = parsed;
  if (positionals.length === 0) return "give a lock NAME before --";
  if (positionals.length > maxSetNames) {
    return `give at most ${maxSetNames} lock NAMEs (acquired together), got ${positionals.length}`;
  }
  for (const [i, name] of positionals.entries()) {
    const problem = nameProblem("NAME", name);
    if (problem) return problem;
    if (positionals.indexOf(name) !== i) return `NAME ${JSON.stringify(name)} is given twice`;
  }
  if (command.length === 0) return "give the command after --, e.g. turnstile lock deploy -- make deploy";
  const durations: Record<string, number | undefined> = {};
  for (const [flag, spec] of Object.entries(DURATIONS)) {
    const text = (values[flag] as string | undefined) ?? spec.fallback;
    if (text === undefined) continue;
    const ms = /^\s*-/.test(text) ? -1 : parseDurationText(text);
    if (ms === undefined) return `--${flag} "${text}" is not a duration (e.g. 500ms, 10s, 5m)`;
    if (ms < spec.minMs || ms > spec.maxMs) return outOfRange(flag, text, spec);
    durations[flag] = ms;
  }
  const signal = values["on-release-request"] as string | undefined;
  const named = signal === undefined ? undefined : signalNamed(signal);
  if (signal !== undefined && named === undefined) {
    return `--on-release-request "${signal}" is not a signal name (e.g. SIGUSR1, USR1, SIGHUP)`;
  }
  const connected = connectionOptions(values, env);
  if (typeof connected === "string") return connected;
  return {
    ...connected,
    name: positionals[0],
    names: positionals,
    command,
    waitMs: durations.wait,
    waitText: values.wait as string | undefined,
    ttlMs: durations.ttl!,
    graceMs: durations.grace!,
    lockDelayMs: durations["lock-delay"],
    quiet: values.quiet === true,
    ...(named && { onReleaseRequest: named }),
  };
}

/** The signal `text` names ("SIGUSR1" or "USR1", any case), or undefined. */
function signalNamed(text: string): NodeJS.Signals | undefined {
  const upper = text.toUpperCase();
  const name = (upper.startsWith("SIG") ? upper : `SIG${upper}`) as NodeJS.Signals;
  return Object.hasOwn(constants.signals, name) ? name : undefined;
}

function outOfRange(flag: string, text: string, spec: { minMs: number; maxMs: number; rule: string }): string {
  return `--${flag} "${text}" is out of range: must be ${range(spec.minMs, spec.maxMs)} (${spec.rule})`;
}
