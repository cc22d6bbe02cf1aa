// One bench contender process, running the compiled client (packages/client/dist) as a user's service would:
// forked by bench/shapes/process-hand-off.ts and process-spread.ts with one JSON argument
// { mode: "handoff" | "spread", addresses: string[], lock: string, workers: number }.
// Hand-off: one client on one lock; the parent says "acquire" / "release" (its board keeps the
// bench's hand-off discipline) and hears "issued", "entered" and "releasing" with monotonic
// timestamps (process.hrtime.bigint(), the same clock in every process). Spread: `workers` clients,
// each looping acquire → release on a lock of its own, on addresses[i % n]; cycles are counted
// while the parent says "measure" is on, and reported at "stop".
import { existsSync } from "node:fs";

// The client package as it is published (turnstile-locks-client, packages/client/dist), or before
// that package existed the client in dist/.
const published = new URL("../../packages/client/dist/client/index.js", import.meta.url);
const entry = existsSync(published) ? published : new URL("../../dist/client/index.js", import.meta.url);
const { TurnstileClient } = await import(entry.href);

const config = JSON.parse(process.argv[2]);
const now = () => process.hrtime.bigint().toString();
const send = (message) => process.send?.(message);

async function handOff() {
  const client = new TurnstileClient(config.addresses[0], { clientName: "bench-process" });
  await client.connect();
  let lock;
  process.on("message", (m) => {
    if (m.type === "acquire") {
      const acquiring = client.acquire(config.lock);
      send({ type: "issued", t: now() });
      acquiring.then(
        (held) => {
          lock = held;
          send({ type: "entered", t: now() });
        },
        (err) => send({ type: "error", message: String(err) }),
      );
    } else if (m.type === "release") {
      const held = lock;
      lock = undefined;
      const t = now();
      held?.release().catch((err) => send({ type: "error", message: String(err) }));
      send({ type: "releasing", t });
    } else if (m.type === "stop") {
      void client.close().finally(() => process.disconnect());
    }
  });
  send({ type: "ready" });
}

async function spread() {
  const n = config.addresses.length;
  const clients = [];
  for (let i = 0; i < config.workers; i++) {
    const client = new TurnstileClient(config.addresses[(config.offset + i) % n], { clientName: "bench-process" });
    await client.connect();
    clients.push(client);
  }
  const state = { measuring: false, stopping: false, cycles: 0, errors: 0, acquireMs: [] };
  const loop = async (client, i) => {
    const name = `${config.lock}-${i}`;
    while (!state.stopping) {
      const asked = process.hrtime.bigint();
      try {
        const lock = await client.acquire(name);
        if (state.measuring) {
          state.cycles++;
          state.acquireMs.push(Number(process.hrtime.bigint() - asked) / 1e6);
        }
        await lock.release();
      } catch {
        state.errors++;
      }
    }
  };
  let loops = [];
  process.on("message", (m) => {
    if (m.type === "start") loops = clients.map(loop);
    else if (m.type === "measure") state.measuring = m.on;
    else if (m.type === "stop") {
      state.stopping = true;
      void Promise.all(loops)
        .then(() => Promise.all(clients.map((c) => c.close())))
        .finally(() => {
          send({ type: "result", cycles: state.cycles, errors: state.errors, acquireMs: state.acquireMs });
          process.disconnect();
        });
    }
  });
  send({ type: "ready" });
}

await (config.mode === "handoff" ? handOff() : spread());
