import type { RequestReleaseResponse } from "../gen/ts/turnstile/v1/turnstile.js";
import { REQUEST_LIMITS } from "../wire/request-limits.js";
import { AdminClient } from "./admin-client.js";
import { LockExit } from "./exit-codes.js";
import { CONNECTION_HELP } from "./flags/connection-flags.js";
import { shownName, withoutName } from "./flags/lock-name.js";
import { type AdminArgs, argsOrExit, parseAdminArgs } from "./flags/parse-admin-args.js";

const USAGE = `Usage: turnstile ask-release [options] NAME --reason TEXT

Asks every holder of lock NAME to let go (an operator's release request, docs/elections.md): each
holder's client is told who asks (operator, with your identity) and why. Nothing is enforced: the
holder decides whether to release, hand over to a waiter (transfer) or carry on. turnstile describe
shows the pending request per holder; turnstile lock --on-release-request SIGNAL forwards it to its
command. Needs the admin permission on NAME, as turnstile revoke does.

Options:
  --reason TEXT        why you ask (at most ${REQUEST_LIMITS.maxReasonBytes} bytes, no control characters)
${CONNECTION_HELP}
  -h, --help           this help

Exit codes: 0 asked; 2 bad usage; 69 coordinator unreachable or request refused (NOT_FOUND: nobody
holds NAME).
`;

/** `turnstile ask-release`: asks a lock's holders to let go. */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const args = argsOrExit("ask-release", USAGE, argv, () => parseAskArgs(argv, env));
  if (typeof args === "number") return args;
  const { name, reason } = args;
  const client = new AdminClient(args.server, args.connection);
  let asked: RequestReleaseResponse;
  try {
    asked = await client.requestRelease({ name, reason });
  } catch (err) {
    process.stderr.write(
      `turnstile ask-release: cannot ask the holders of ${shownName(name)}: ${withoutName((err as Error).message, name)}\n`,
    );
    return LockExit.unavailable;
  } finally {
    client.close();
  }
  const holders = asked.holders === 1 ? "1 holder" : `${asked.holders} holders`;
  process.stdout.write(`asked ${holders} of ${shownName(name)} to let go\n`);
  return 0;
}

function parseAskArgs(argv: string[], env: NodeJS.ProcessEnv): (AdminArgs & { name: string; reason: string }) | string {
  const args = parseAdminArgs(argv, { flags: ["reason"], positionals: ["NAME"] }, env);
  if (typeof args === "string") return args;
  const reason = args.values.reason;
  if (reason === undefined) return "--reason is required (say why you ask the holder to let go)";
  const bytes = Buffer.byteLength(reason, "utf8");
  if (bytes > REQUEST_LIMITS.maxReasonBytes) {
    return `--reason is ${bytes} bytes: the maximum is ${REQUEST_LIMITS.maxReasonBytes} bytes (UTF-8)`;
  }
  if (/\p{Cc}/u.test(reason)) return "--reason must not contain control characters";
  return { ...args, name: args.positionals[0], reason };
}
