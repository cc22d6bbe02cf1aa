// A lock holder in its own process, driven over stdin, for tests that pause (SIGSTOP) a client.
// Usage: node --import tsx holder-child.ts ADDRESS NAME TTL_MS [KIND]
// KIND: "exclusive" (default), "read" (a read-write lock's read hold) or "semaphore:LIMIT".
// Prints one JSON line per event; reads commands: "freeze" (report the lease deadline on the
// wall clock, then SIGSTOP itself, so nothing runs between the report and the pause) and
// "report" (whether the lock's signal has fired, and with what).
import { createInterface } from "node:readline";
import { TurnstileClient } from "../../client/index.js";

const [address, name, ttl, kind = "exclusive"] = process.argv.slice(2);
const client = new TurnstileClient(address, { ttlMs: Number(ttl) });
const lock = kind.startsWith("semaphore:")
  ? await client.semaphore(name, Number(kind.slice("semaphore:".length))).acquire()
  : kind === "read"
    ? await client.readWriteLock(name).read()
    : await client.acquire(name);
const say = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);
say({ event: "acquired", token: String(lock.fencingToken) });

for await (const line of createInterface({ input: process.stdin })) {
  if (line === "freeze") {
    say({ event: "frozen", deadlineWallMs: Date.now() + lock.leaseRemainingMs });
    process.kill(process.pid, "SIGSTOP");
  } else if (line === "report") {
    const reason = lock.signal.reason as { name?: string; lostReason?: string } | undefined;
    say({
      event: "report",
      aborted: lock.signal.aborted,
      error: reason?.name,
      lostReason: reason?.lostReason,
      atWallMs: Date.now(),
    });
    await client.close().catch(() => {});
    process.exit(0);
  }
}
