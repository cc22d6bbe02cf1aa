// A worker of the many-locks fault test, in its own process. Usage:
//   node --import tsx many-locks-child.ts WORKER ADDRESSES NAMES WAIT_MS
// ADDRESSES and NAMES are comma-separated. Each round picks 1-4 distinct names at random, in random
// order, and takes them either as one set (acquireAll) or one by one (acquire each, holding the
// ones it has while it waits for the next: the shape that deadlocks). All of a worker's acquires
// use the worker's name as owner, so the coordinators see one (session, owner) per worker. It holds
// a few ms, then lets go of everything. A failed acquire (DEADLOCK, TIMEOUT, ...) ends the round: the
// worker lets go of what it holds. Every event goes to the parent as one IPC message stamped with
// process.hrtime.bigint(), the machine's one monotonic clock; "stop" from the parent ends the loop.
import { TurnstileClient, TurnstileError } from "../../client/index.js";
import type { Lock } from "../../client/locks/lock.js";

const [worker, addresses, names, waitMs] = process.argv.slice(2);
const pool = names.split(",");
const client = new TurnstileClient(addresses.split(","), { clientName: worker });
const now = () => String(process.hrtime.bigint());
const send = (m: object) => process.send?.({ worker, ...m });
const stop = new AbortController();
process.on("message", (m) => m === "stop" && stop.abort());
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `count` distinct names of the pool in random order. */
function pick(count: number): string[] {
  const left = [...pool];
  return Array.from({ length: count }, () => left.splice(Math.floor(Math.random() * left.length), 1)[0]);
}

/** The outcome an error is logged as, and (for DEADLOCK) the cycle the coordinator named. */
function outcomeOf(err: unknown): { outcome: string; cycle?: { owner: string; name: string }[] } {
  if (!(err instanceof TurnstileError)) return { outcome: (err as Error).name };
  const cycle =
    err.reason === "deadlock" ? err.deadlockCycle?.map((s) => ({ owner: s.owner, name: s.name })) : undefined;
  return { outcome: err.reason, cycle };
}

type Held = { id: string; lock: Lock };
const options = { owner: worker, waitMs: Number(waitMs), signal: stop.signal };
let round = 0;
while (!stop.signal.aborted) {
  const chosen = pick(1 + Math.floor(Math.random() * 4));
  const id = `${worker}#${round++}`;
  const held: Held[] = [];
  if (chosen.length > 1 && Math.random() < 0.4) {
    send({ ev: "start", id, name: chosen.join("+"), set: chosen, at: now() });
    try {
      const set = await client.acquireAll(chosen, options);
      for (const lock of set.locks) {
        held.push({ id: `${id}/${lock.name}`, lock });
        send({ ev: "grant", id: `${id}/${lock.name}`, name: lock.name, token: String(lock.fencingToken), at: now() });
      }
      send({ ev: "end", id, name: chosen.join("+"), outcome: "granted", at: now() });
    } catch (err) {
      send({ ev: "end", id, name: chosen.join("+"), ...outcomeOf(err), at: now() });
    }
  } else {
    for (const name of chosen) {
      const one = `${id}/${name}`;
      send({ ev: "start", id: one, name, holds: held.map((h) => h.lock.name), at: now() });
      try {
        const lock = await client.acquire(name, options);
        held.push({ id: one, lock });
        send({ ev: "grant", id: one, name, token: String(lock.fencingToken), at: now() });
        send({ ev: "end", id: one, name, outcome: "granted", at: now() });
      } catch (err) {
        send({ ev: "end", id: one, name, ...outcomeOf(err), at: now() });
        break;
      }
    }
  }
  if (held.length > 0) await sleep(2 + Math.random() * 15);
  // A hold ends, for the checker, when this process stops using it: before its release goes out.
  for (const h of held) send({ ev: "exit", id: h.id, name: h.lock.name, at: now() });
  await Promise.all(held.map((h) => h.lock.release().catch(() => {})));
}
await client.close().catch(() => {});
send({ ev: "done", at: now() });
process.disconnect?.();
