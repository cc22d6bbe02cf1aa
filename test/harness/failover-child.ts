// A contending client in its own process, for the failover fault test. Usage:
//   node --import tsx failover-child.ts WORKER ADDRESSES TTL_MS SPEC...
// ADDRESSES: coordinators, comma-separated. SPEC: "lock:NAME", "semaphore:NAME:LIMIT" or "set:NAME+NAME…"
// (AcquireAll); each round picks one at random, acquires it (waiting TURNSTILE_FAILOVER_WAIT_MS, default
// 60 s), writes its token (each name's, for a set) to the parent's token-checking resource (over IPC,
// answered before the hold goes on), holds a few ms and releases. A set's holds are reported per
// name, with the ids `<id>/<name>`. Every event goes to
// the parent as one IPC message stamped with process.hrtime.bigint() (one monotonic clock for all
// processes of the machine). "stop" from the parent ends the loop; the child then exits.
import { TurnstileClient } from "../../client/index.js";
import type { Lock } from "../../client/locks/lock.js";

/** How long each acquire waits; the checker may bound how far past it an acquire ends. */
const WAIT_MS = Number(process.env.TURNSTILE_FAILOVER_WAIT_MS ?? 60_000);

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
  send({ ev: "start", id, name, waitMs: WAIT_MS, at: now() });
  // Each hold as the checker sees it: its id, name and lock.
  let holds: { id: string; name: string; lock: Lock }[];
  try {
    const options = { signal: stop.signal, waitMs: WAIT_MS };
    if (kind === "set") {
      const set = await client.acquireAll(name.split("+"), options);
      holds = set.locks.map((lock) => ({ id: `${id}/${lock.name}`, name: lock.name, lock }));
    } else {
      const lock =
        kind === "semaphore"
          ? await client.semaphore(name, Number(spec[2])).acquire(options)
          : await client.acquire(name, options);
      holds = [{ id, name, lock }];
    }
  } catch (err) {
    // A TurnstileError by its reason (timeout, unavailable, …), anything else by its class.
    const outcome = (err as { reason?: string }).reason ?? (err as Error).name;
    send({ ev: "end", id, name, outcome, detail: (err as Error).message, at: now() });
    if (!stop.signal.aborted) await sleep(50);
    continue;
  }
  const lostAt = new Map<string, string>();
  for (const hold of holds) {
    send({ ev: "grant", id: hold.id, name: hold.name, token: String(hold.lock.fencingToken), at: now() });
    hold.lock.signal.addEventListener("abort", () => lostAt.set(hold.id, lostAt.get(hold.id) ?? now()), {
      once: true,
    });
  }
  send({ ev: "end", id, name, outcome: "granted", at: now() });
  for (const hold of holds) {
    const accepted = await write(hold.name, hold.lock.fencingToken);
    if (!accepted)
      send({ ev: "refused", id: hold.id, name: hold.name, token: String(hold.lock.fencingToken), at: now() });
  }
  await sleep(5 + Math.random() * 30);
  // The hold ends, for the checker, when this process stops using the resource: before the release goes out.
  for (const hold of holds) {
    const lost = lostAt.get(hold.id);
    const token = String(hold.lock.fencingToken);
    send({ ev: lost ? "lost" : "exit", id: hold.id, name: hold.name, token, at: lost ?? now() });
  }
  await Promise.all(holds.map((hold) => hold.lock.release().catch(() => {})));
}
await client.close().catch(() => {});
send({ ev: "done", at: now() });
process.disconnect?.();
