import type { RevokeResponse } from "../gen/ts/turnstile/v1/turnstile.js";
import { REQUEST_LIMITS } from "../wire/request-limits.js";
import { AdminClient } from "./admin-client.js";
import { LockExit } from "./exit-codes.js";
import { CONNECTION_HELP } from "./flags/connection-flags.js";
import { shownName, withoutName } from "./flags/lock-name.js";
import { type AdminArgs, argsOrExit, parseAdminArgs } from "./flags/parse-admin-args.js";

const USAGE = `Usage: turnstile revoke [options] NAME HOLDER

Takes HOLDER's hold on lock NAME away (every hold count) and hands the lock to the next waiter at
once (after the hold's lock-delay, if it has one); the holder's client is told its lock was lost
(revoked). HOLDER is SESSION_ID/OWNER, as the HOLDER column of turnstile describe shows it (split at
the first "/": session ids have none).

The revoked holder may still be running: only fencing tokens stop its writes. Use it to remove a
stuck holder, not to stop work.

Options:
${CONNECTION_HELP}
  -h, --help           this help

Exit codes: 0 revoked; 2 bad usage; 69 coordinator unreachable or request refused (NOT_FOUND:
HOLDER does not hold NAME).
`;

/** `turnstile revoke`: takes one holder's hold on a lock away. */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const args = argsOrExit("revoke", USAGE, argv, () => parseRevokeArgs(argv, env));
  if (typeof args === "number") return args;
  const { name, holder, sessionId, owner } = args;
  const client = new AdminClient(args.server, args.connection);
  let revoked: RevokeResponse;
  try {
    revoked = await client.revoke({ name, sessionId, owner });
  } catch (err) {
    process.stderr.write(
      `turnstile revoke: cannot revoke ${holder} on ${shownName(name)}: ${withoutName((err as Error).message, name)}\n`,
    );
    return LockExit.unavailable;
  } finally {
    client.close();
  }
  process.stdout.write(
    `revoked ${holder} from ${shownName(name)} (fencing token ${revoked.fencingToken}, hold count ${revoked.holdCount})\n`,
  );
  return 0;
}

function parseRevokeArgs(
  argv: string[],
  env: NodeJS.ProcessEnv,
): (AdminArgs & { name: string; holder: string; sessionId: string; owner: string }) | string {
  const args = parseAdminArgs(argv, { positionals: ["NAME", "HOLDER"] }, env);
  if (typeof args === "string") return args;
  const [name, holder] = args.positionals;
  const slash = holder.indexOf("/");
  if (slash <= 0) return `HOLDER must be SESSION_ID/OWNER (see turnstile describe NAME), got ${shownName(holder)}`;
  const ownerBytes = Buffer.byteLength(holder.slice(slash + 1), "utf8");
  if (ownerBytes > REQUEST_LIMITS.maxIdBytes)
    return `HOLDER's OWNER is ${ownerBytes} bytes: the maximum is ${REQUEST_LIMITS.maxIdBytes} bytes (UTF-8)`;
  if (!/^[0-9a-f]{32}\//.test(holder))
    return `HOLDER's SESSION_ID must be 32 lowercase hex digits (as describe shows it), got ${shownName(holder.slice(0, slash))}`;
  return { ...args, name, holder, sessionId: holder.slice(0, slash), owner: holder.slice(slash + 1) };
}
