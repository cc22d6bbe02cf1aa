import { HolderChange, type HolderEvent, type LockSnapshot } from "../gen/ts/turnstile/v1/turnstile.js";
import { AdminClient } from "./admin-client.js";
import { LockExit } from "./exit-codes.js";
import { CONNECTION_HELP } from "./flags/connection-flags.js";
import { shownName, withoutName } from "./flags/lock-name.js";
import { argsOrExit, parseAdminArgs } from "./flags/parse-admin-args.js";
import { type HolderView, holderView, modeName, valueCell } from "./output/holder-view.js";

const USAGE = `Usage: turnstile watch [options] NAME

Streams lock NAME's holders until interrupted (SIGINT/SIGTERM, exit 0): first a snapshot line,
then one line per change in the order the store made them:

  VERSION snapshot waiters=N holders: HOLDER token=T value="V", ...   (or "holders: none")
  VERSION CHANGE HOLDER token=T value="V" holders_left=N

CHANGE is acquired, released, expired, revoked or value (a new value proclaimed); HOLDER is
SESSION_ID/OWNER. "resync" replaces "snapshot" when the watch fell behind and starts over.

Options:
${CONNECTION_HELP}
  --output FORMAT      table (default: the lines above) or json (one JSON object per line, with
                       "type": "snapshot" or "event")
  -h, --help           this help

Exit codes: 0 interrupted; 2 bad usage; 69 coordinator unreachable, request refused, or the
watch ended by the coordinator (e.g. it is shutting down: watch again).
`;

const CHANGES: Record<number, string> = {
  [HolderChange.HOLDER_CHANGE_ACQUIRED]: "acquired",
  [HolderChange.HOLDER_CHANGE_RELEASED]: "released",
  [HolderChange.HOLDER_CHANGE_EXPIRED]: "expired",
  [HolderChange.HOLDER_CHANGE_REVOKED]: "revoked",
  [HolderChange.HOLDER_CHANGE_VALUE]: "value",
};

/** `turnstile watch`: prints a lock's snapshot, then every change of its holders. */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const args = argsOrExit("watch", USAGE, argv, () =>
    parseAdminArgs(argv, { output: true, positionals: ["NAME"] }, env),
  );
  if (typeof args === "number") return args;
  const name = args.positionals[0];
  const json = args.output === "json";
  const interrupted = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => interrupted.abort(signal);
  for (const s of ["SIGINT", "SIGTERM"] as const) process.on(s, onSignal);
  const client = new AdminClient(args.server, args.connection);
  const stream = client.watch(name);
  try {
    for (;;) {
      const { kind } = await stream.next({ signal: interrupted.signal });
      if (kind?.$case === "snapshot") {
        process.stdout.write(json ? jsonLine(snapshotView(kind.snapshot)) : snapshotLine(kind.snapshot));
      } else if (kind?.$case === "event") {
        process.stdout.write(json ? jsonLine(eventView(kind.event)) : eventLine(kind.event));
      }
    }
  } catch (err) {
    if (interrupted.signal.aborted) return 0;
    process.stderr.write(
      `turnstile watch: watching ${shownName(name)} on ${args.server}: ${withoutName((err as Error).message, name)}\n`,
    );
    return LockExit.unavailable;
  } finally {
    for (const s of ["SIGINT", "SIGTERM"] as const) process.off(s, onSignal);
    stream.cancel();
    client.close();
  }
}

function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

function snapshotView(s: LockSnapshot) {
  return {
    type: "snapshot",
    name: s.name,
    version: String(s.version),
    resync: s.resync,
    mode: modeName(s.mode),
    limit: s.limit,
    holders: s.holders.map(holderView),
    waiterCount: s.waiterCount,
    noHolder: s.noHolder,
  };
}

function eventView(e: HolderEvent) {
  return {
    type: "event",
    name: e.name,
    version: String(e.version),
    change: CHANGES[e.change] ?? "unknown",
    holder: e.holder ? holderView(e.holder) : null,
    holdersLeft: e.holdersLeft,
    noHolder: e.noHolder,
  };
}

function holderText(h: HolderView): string {
  return `${h.holder} token=${h.fencingToken} value=${valueCell(h)}`;
}

function snapshotLine(s: LockSnapshot): string {
  const holders = s.holders.length ? s.holders.map((h) => holderText(holderView(h))).join(", ") : "none";
  return `${s.version} ${s.resync ? "resync" : "snapshot"} waiters=${s.waiterCount} holders: ${holders}\n`;
}

function eventLine(e: HolderEvent): string {
  const holder = e.holder ? holderText(holderView(e.holder)) : "-";
  return `${e.version} ${CHANGES[e.change] ?? "unknown"} ${holder} holders_left=${e.holdersLeft}\n`;
}
