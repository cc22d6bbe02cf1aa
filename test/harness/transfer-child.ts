// The naive two-account transfer, written as a new user would — no owner passed anywhere — in its
// own process, for tests of owners that follow the work (docs/deadlocks.md).
// Usage: node --import tsx transfer-child.ts ADDRESS FROM TO WAIT_MS [ownersFollowScope=true|false]
// Takes account/FROM, prints {"event":"holding"}, waits for the line "go" on stdin, then takes
// account/TO inside the first lock's callback; prints {"event":"transferred"} or {"event":"failed",
// reason, cycle}, then {"event":"done"} once both locks are released and the client closed.
import { createInterface } from "node:readline";
import { TurnstileClient, TurnstileError } from "../../client/index.js";

const [address, from, to, waitMs, follow = "true"] = process.argv.slice(2);
const say = (o: object) => process.stdout.write(`${JSON.stringify({ ...o, atWallMs: Date.now() })}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const client = new TurnstileClient(address, { ownersFollowScope: follow === "true", clientName: `transfer-${from}` });
try {
  await client.withLock(`account/${from}`, async () => {
    say({ event: "holding" });
    await lines.next(); // "go"
    try {
      await client.withLock(`account/${to}`, () => say({ event: "transferred" }), { waitMs: Number(waitMs) });
    } catch (error) {
      if (!(error instanceof TurnstileError)) throw error;
      say({ event: "failed", reason: error.reason, cycle: error.deadlockCycle.map((step) => step.name) });
    }
  });
} finally {
  await client.close();
}
say({ event: "done" });
process.exit(0);
