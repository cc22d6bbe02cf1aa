import { type DescribeResponse, type Holder, LockMode, type Waiter } from "../gen/ts/turnstile/v1/turnstile.js";
import { msFromDuration } from "../wire/duration.js";
import { AdminClient } from "./admin-client.js";
import { LockExit } from "./exit-codes.js";
import { CONNECTION_HELP } from "./flags/connection-flags.js";
import { shownName, withoutName } from "./flags/lock-name.js";
import { argsOrExit, parseAdminArgs } from "./flags/parse-admin-args.js";
import { formatTable } from "./output/format-table.js";
import { holderView, modeName, valueCell } from "./output/holder-view.js";

const USAGE = `Usage: turnstile describe [options] NAME

Shows one lock: its holders (HOLDER is SESSION_ID/OWNER, as turnstile revoke takes it; client
name, fencing token, hold count, how long held, lease left, value) and its waiters in queue order
(how long each has waited, and BEHIND: the holders it waits behind; a member of a set acquired all
together names the set's locks beside its mode). A free lock has neither. A lock whose last hold ended
without a release (lease ran out, revoked) may be delayed: "delayed until TIME (in N s)", and nobody is
granted it before then (the hold's lock-delay). A holder someone asked to let go (turnstile ask-release,
a candidate's release request) is listed under "Release requested" with who asked and why; waiters
queued with a priority show it (PRIO, highest first: docs/elections.md).

Options:
${CONNECTION_HELP}
  --output FORMAT      table (default) or json
  -h, --help           this help

Exit codes: 0 described; 2 bad usage; 69 coordinator unreachable or request refused.
`;

/** `turnstile describe`: one lock's holders and waiters. */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const args = argsOrExit("describe", USAGE, argv, () =>
    parseAdminArgs(argv, { output: true, positionals: ["NAME"] }, env),
  );
  if (typeof args === "number") return args;
  const name = args.positionals[0];
  const client = new AdminClient(args.server, args.connection);
  let lock: DescribeResponse;
  try {
    lock = await client.describe(name);
  } catch (err) {
    process.stderr.write(
      `turnstile describe: cannot describe ${shownName(name)} on ${args.server}: ${withoutName((err as Error).message, name)}\n`,
    );
    return LockExit.unavailable;
  } finally {
    client.close();
  }
  process.stdout.write(args.output === "json" ? `${JSON.stringify(describeView(lock))}\n` : describeTable(lock));
  return 0;
}

/** The JSON document of `describe --output json`. */
function describeView(lock: DescribeResponse) {
  return {
    name: lock.name,
    mode: lock.holders.length ? modeName(lock.mode) : modeName(LockMode.LOCK_MODE_UNSPECIFIED),
    limit: lock.limit,
    version: String(lock.version),
    holders: lock.holders.map((h) => ({ ...holderView(h), ...releaseRequestView(h) })),
    waiters: lock.waiters.map(waiterView),
    ...delayView(lock),
  };
}

/** The lock-delay in force, if any: ms left and its end on this machine's clock. */
function delayView(lock: DescribeResponse): { delayRemainingMs?: number; delayedUntil?: string } {
  if (!lock.delayRemaining) return {};
  const ms = Math.round(msFromDuration(lock.delayRemaining));
  return { delayRemainingMs: ms, delayedUntil: new Date(Date.now() + ms).toISOString() };
}

/** A holder's pending release request, if someone asked it to let go. */
function releaseRequestView(holder: Holder): { releaseRequest?: { requester: string; reason: string } } {
  const asked = holder.releaseRequest;
  return asked ? { releaseRequest: { requester: asked.requester, reason: asked.reason } } : {};
}

function waiterView(waiter: Waiter) {
  return {
    position: waiter.position,
    priority: waiter.priority,
    waiter: `${waiter.sessionId}/${waiter.owner}`,
    sessionId: waiter.sessionId,
    owner: waiter.owner,
    requestId: waiter.requestId,
    mode: modeName(waiter.mode),
    clientName: waiter.clientName,
    leaseRemainingMs: Math.round(waiter.leaseRemaining ? msFromDuration(waiter.leaseRemaining) : 0),
    waitedMs: Math.round(waiter.waited ? msFromDuration(waiter.waited) : 0),
    // Only for a member of an acquireAll set: every name of its set.
    ...(waiter.setNames.length > 0 && { setNames: waiter.setNames }),
    blockedBy: waiter.blockedBy.map((b) => ({
      holder: `${b.sessionId}/${b.owner}`,
      sessionId: b.sessionId,
      owner: b.owner,
      clientName: b.clientName,
      identity: b.identity,
      heldForMs: Math.round(b.heldFor ? msFromDuration(b.heldFor) : 0),
      fencingToken: String(b.fencingToken),
    })),
  };
}

function describeTable(lock: DescribeResponse): string {
  const limit = lock.limit ? ` (limit ${lock.limit})` : "";
  const mode = lock.holders.length ? `${modeName(lock.mode)}${limit}` : modeName(LockMode.LOCK_MODE_UNSPECIFIED);
  let text = `Lock: ${lock.name}\nMode: ${mode}\n`;
  const { delayRemainingMs, delayedUntil } = delayView(lock);
  if (delayedUntil)
    text += `Delay: delayed until ${delayedUntil} (in ${Math.ceil((delayRemainingMs ?? 0) / 1000)} s)\n`;
  text += `Version: ${lock.version}\n`;
  const holders = lock.holders.map(holderView);
  text += `\nHolders: ${holders.length}\n`;
  if (holders.length) {
    // The IDENTITY column appears only when the coordinator names identities (security on).
    const named = holders.some((h) => h.identity !== "");
    const rows = holders.map((h) => [
      h.holder,
      h.clientName || "-",
      ...(named ? [h.identity] : []),
      h.fencingToken,
      String(h.holdCount),
      `${h.heldForMs ?? 0}ms`,
      `${h.leaseRemainingMs}ms`,
      valueCell(h),
    ]);
    text += formatTable(
      ["HOLDER", "CLIENT", ...(named ? ["IDENTITY"] : []), "TOKEN", "HOLDS", "HELD", "LEASE", "VALUE"],
      rows,
    );
  }
  const asked = lock.holders.filter((h) => h.releaseRequest);
  if (asked.length) {
    text += "\nRelease requested:\n";
    const rows = asked.map((h) => [
      `${h.sessionId}/${h.owner}`,
      h.releaseRequest?.requester ?? "",
      JSON.stringify(h.releaseRequest?.reason ?? ""),
    ]);
    text += formatTable(["HOLDER", "BY", "REASON"], rows);
  }
  const waiters = lock.waiters.map(waiterView);
  text += `\nWaiters: ${waiters.length}\n`;
  // PRIO only when some waiter has one: a lock without priorities reads as before.
  const ranked = waiters.some((w) => w.priority > 0);
  if (waiters.length) {
    const rows = waiters.map((w) => [
      String(w.position),
      ...(ranked ? [String(w.priority)] : []),
      w.waiter,
      w.clientName || "-",
      w.setNames ? `${w.mode}, set of ${w.setNames.map(shownName).join(" ")}` : w.mode,
      `${w.waitedMs}ms`,
      `${w.leaseRemainingMs}ms`,
      w.blockedBy.map((b) => `${b.holder} (${b.heldForMs}ms)`).join(", "),
    ]);
    const head = ["POS", ...(ranked ? ["PRIO"] : []), "WAITER", "CLIENT", "MODE", "WAITED", "LEASE", "BEHIND"];
    text += formatTable(head, rows);
  }
  return text;
}
