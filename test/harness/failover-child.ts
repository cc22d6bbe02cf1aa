// A contending client in its own process, for the failover fault test. Usage:
//   node --import tsx failover-child.ts WORKER ADDRESSES TTL_MS SPEC...
// ADDRESSES: coordinators, comma-separated. SPEC: "lock:NAME" or "semaphore:NAME:LIMIT"; each
// round picks one at random, acquires it, writes its token to the parent's token-checking resource
// (over IPC, answered before the hold goes on), holds a few ms and releases. Every event goes to
// the parent as one IPC message stamped with process.hrtime.bigint() (one monotonic clock for all
// processes of the machine). "stop" from the parent ends the loop; the child then exits.
import { TurnstileClient } from "../../client/index.js";
import type { Lock } from "../../client/locks/lock.js";

const [worker, addresses, ttl, ...specs] = process.argv.slice(2);
const client = new TurnstileClient(addresses.split(","), { ttlMs: Number(ttl) });
const now = () => String(process.hrtime.bigint());
const send = (m: object) => process.send?.({ worker, ...m });
const stop = new AbortController();
process.on("message", (m) => m === "stop" && stop.abort());

let pendingWrite: ((ok: boolean) => void) | undefined;
process.on("message", (m: { written?: boolean }) => {
  if (typeof m === "object" && m && "written" in m) pendingWrite?.(Boolean(m.written));
});
/** Writes the token to the parent's resource; resolves with whether the resource accepted it. */
function write(name: string, token: bigint): Promise<boolean> {
  return new Promise((resolve) => {
    pendingWrite = resolve;
    send({ ev: "write", name, token: String(token), at: now() });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let round = 0;
while (!stop.signal.aborted) {
  const spec = specs[Math.floor(Math.random() * specs.length)].split(":");
  const [kind, name] = spec;
  const id = `${worker}#${round++}`;
  send({ ev: "start", id, name, at: now() });
  let lock: Lock | undefined;
  try {
    const options = { signal: stop.signal, waitMs: 60_000 };
    lock =
      kind === "semaphore"
        ? await client.semaphore(name, Number(spec[2])).acquire(options)
        : await client.acquire(name, options);
  } catch (err) {
    send({ ev: "end", id, name, outcome: (err as Error).name, detail: (err as Error).message, at: now() });
    if (!stop.signal.aborted) await sleep(50);
    continue;
  }
  const token = lock.fencingToken;
  send({ ev: "grant", id, name, token: String(token), at: now() });
  send({ ev: "end", id, name, outcome: "granted", at: now() });
  let lostAt: string | undefined;
  const signal = lock.signal;
  signal.addEventListener("abort", () => (lostAt ??= now()), { once: true });
  const accepted = await write(name, token);
  if (!accepted) send({ ev: "refused", id, name, token: String(token), at: now() });
  await sleep(5 + Math.random() * 30);
  // The hold ends, for the checker, when this process stops using the resource: before the release goes out.
  const exitAt = lostAt ?? now();
  send({ ev: lostAt ? "lost" : "exit", id, name, token: String(token), at: exitAt });
  await lock.release().catch(() => {});
}
await client.close().catch(() => {});
send({ ev: "done", at: now() });
process.disconnect?.();
