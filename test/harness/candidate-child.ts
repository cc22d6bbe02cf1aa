// An election candidate in its own process, driven over stdin, for tests that kill (SIGKILL) or
// pause (SIGSTOP) a leader or a candidate.
// Usage: node --import tsx candidate-child.ts ADDRESS NAME TTL_MS VALUE
// Campaigns at once and prints one JSON line per event: "elected" (token, wall time), "lost"
// (when the leadership's signal fires: reason, wall time), "campaign-failed" (error name and
// lostReason). Commands: "freeze" (report the lease deadline on the wall clock — NaN while not
// elected — then SIGSTOP itself, so nothing runs between the report and the pause), "resign",
// and "report" (whether the leadership's signal has fired, and with what).
import { createInterface } from "node:readline";
import { type Leadership, TurnstileClient } from "../../client/index.js";

const [address, name, ttl, value] = process.argv.slice(2);
const client = new TurnstileClient(address, { ttlMs: Number(ttl) });
const say = (o: object) => process.stdout.write(`${JSON.stringify({ ...o, atWallMs: Date.now() })}\n`);
let leadership: Leadership | undefined;

client
  .election(name)
  .campaign(value)
  .then(
    (l) => {
      leadership = l;
      say({ event: "elected", token: String(l.fencingToken) });
      l.signal.addEventListener("abort", () => {
        const reason = l.signal.reason as { lostReason?: string } | undefined;
        say({ event: "lost", lostReason: reason?.lostReason });
      });
    },
    (error: { name?: string; lostReason?: string; message?: string }) =>
      say({ event: "campaign-failed", error: error.name, lostReason: error.lostReason, message: error.message }),
  );

for await (const line of createInterface({ input: process.stdin })) {
  if (line === "freeze") {
    say({ event: "frozen", deadlineWallMs: Date.now() + (leadership ? leadership.leaseRemainingMs : Number.NaN) });
    process.kill(process.pid, "SIGSTOP");
  } else if (line === "resign") {
    await leadership?.resign();
    say({ event: "resigned" });
  } else if (line === "report") {
    const reason = leadership?.signal.reason as { name?: string; lostReason?: string } | undefined;
    say({ event: "report", aborted: leadership?.signal.aborted, error: reason?.name, lostReason: reason?.lostReason });
  }
}
