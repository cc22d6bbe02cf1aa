// A client holding several locks in its own process, for tests that pause it (SIGSTOP) across a
// coordinator failure. Usage: node --import tsx resume-child.ts ADDR1,ADDR2 TTL_MS NAME1,NAME2,...
// Prints one JSON line per event ({"event":"acquired"|"lost"|<client event>, ...}, each with
// atWallMs); reads the command "report" (lock and client state; then it closes and exits).
import { createInterface } from "node:readline";
import { TurnstileClient } from "../../client/index.js";

const [addresses, ttl, names] = process.argv.slice(2);
const client = new TurnstileClient(addresses.split(","), { ttlMs: Number(ttl) });
const say = (o: object) => process.stdout.write(`${JSON.stringify({ ...o, atWallMs: Date.now() })}\n`);
for (const type of ["connected", "reconnecting", "resumed", "expired", "ended"] as const) {
  client.on(type, (event) => say({ event: type, sessionId: event.sessionId, reason: event.error?.reason }));
}
const locks = [];
for (const name of names.split(",")) locks.push(await client.acquire(name));
for (const lock of locks) {
  lock.signal.addEventListener("abort", () => {
    const reason = lock.signal.reason as { lostReason?: string };
    say({ event: "lost", name: lock.name, lostReason: reason.lostReason });
  });
}
say({ event: "acquired", sessionId: client.sessionId, tokens: locks.map((l) => String(l.fencingToken)) });

for await (const line of createInterface({ input: process.stdin })) {
  if (line === "report") {
    const lost = locks.map((lock) => (lock.signal.reason as { lostReason?: string } | undefined)?.lostReason ?? null);
    say({ event: "report", state: client.state, lost });
    await client.close().catch(() => {});
    process.exit(0);
  }
}
