import type { LockSummary } from "../gen/ts/turnstile/v1/turnstile.js";
import { AdminClient } from "./admin-client.js";
import { LockExit } from "./exit-codes.js";
import { CONNECTION_HELP } from "./flags/connection-flags.js";
import { type AdminArgs, argsOrExit, parseAdminArgs } from "./flags/parse-admin-args.js";
import { formatTable } from "./output/format-table.js";
import { modeName } from "./output/holder-view.js";

const USAGE = `Usage: turnstile ls [options] [PREFIX]

Lists the active locks (those with holders or waiters) whose names start with PREFIX (default:
every lock), sorted by name, paging through the coordinator's List until done (its pages come in
no particular order, so every page is read, also with --limit).

Options:
${CONNECTION_HELP}
  --limit N            print only the first N locks by name
  --output FORMAT      table (default) or json (an array of {name, mode, limit, holders, waiters})
  -h, --help           this help

Exit codes: 0 listed; 2 bad usage; 69 coordinator unreachable or request refused.
`;

// The server's maximum page size: fewer round trips for big listings.
const PAGE_SIZE = 1000;

/** `turnstile ls`: lists the active locks by name prefix. */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const args = argsOrExit("ls", USAGE, argv, () => parseLsArgs(argv, env));
  if (typeof args === "number") return args;
  const { prefix, limit } = args;
  const client = new AdminClient(args.server, args.connection);
  let locks: LockSummary[];
  try {
    locks = await listAll(client, prefix, limit);
  } catch (err) {
    process.stderr.write(`turnstile ls: cannot list from ${args.server}: ${(err as Error).message}\n`);
    return LockExit.unavailable;
  } finally {
    client.close();
  }
  const rows = locks.map((l) => ({
    name: l.name,
    mode: modeName(l.mode),
    limit: l.limit,
    holders: l.holderCount,
    waiters: l.waiterCount,
  }));
  if (args.output === "json") {
    process.stdout.write(`${JSON.stringify(rows)}\n`);
  } else {
    const cells = rows.map((r) => [
      r.name,
      r.mode,
      r.limit ? String(r.limit) : "",
      String(r.holders),
      String(r.waiters),
    ]);
    process.stdout.write(formatTable(["NAME", "MODE", "LIMIT", "HOLDERS", "WAITERS"], cells));
  }
  return 0;
}

function parseLsArgs(argv: string[], env: NodeJS.ProcessEnv): (AdminArgs & { prefix: string; limit: number }) | string {
  const args = parseAdminArgs(argv, { flags: ["limit"], output: true, positionals: ["PREFIX?"] }, env);
  if (typeof args === "string") return args;
  const text = args.values.limit;
  const limit = text === undefined ? Number.POSITIVE_INFINITY : Number(text);
  if (text !== undefined && (!/^\d+$/.test(text) || !Number.isSafeInteger(limit) || limit < 1)) {
    return `--limit must be a whole number of locks, at least 1, got "${text}"`;
  }
  return { ...args, prefix: args.positionals[0] ?? "", limit };
}

/**
 * Pages through List to the last page and answers the first `limit` locks by name. List's pages come
 * in no particular order (on Redis, SCAN's), so the first by name can be on the last page: every page
 * is read, keeping only the `limit` first names seen so far.
 */
async function listAll(client: AdminClient, prefix: string, limit: number): Promise<LockSummary[]> {
  let locks: LockSummary[] = [];
  let pageToken = "";
  do {
    const page = await client.list({ prefix, pageSize: PAGE_SIZE, pageToken });
    locks.push(...page.locks);
    if (locks.length > limit) locks = byName(locks).slice(0, limit);
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return byName(locks);
}

function byName(locks: LockSummary[]): LockSummary[] {
  return locks.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
