import { spawn } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import type { Lock } from "../../client/index.js";
import { TurnstileClient } from "../../client/index.js";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { redisServerAvailable, startRedis } from "../../test/harness/redis-server.js";
import { ensureCompiled } from "../env/compiled-build.js";
import { startCoordinator } from "../env/coordinator-process.js";

const WORKER = fileURLToPath(new URL("./phase-worker.ts", import.meta.url));

/**
 * `npm run test:stress`: the overload cases of issue 16 against a real `turnstile serve` and a real
 * redis-server. Bystanders (the TS client, one lock each on a short TTL) hold their locks while
 * another process attacks: SESSIONS × ACQUIRES try-once acquires at once, then streams that never
 * send Open; then (bystanders gone) requests behind an Open the stalled store does not answer. Prints what bystanders were told and what
 * Redis holds; exits 1 if any bystander lost a lock.
 */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      sessions: { type: "string", default: "80" },
      acquires: { type: "string", default: "1000" },
      bystanders: { type: "string", default: "10" },
      "ttl-ms": { type: "string", default: "3000" },
      unopened: { type: "string", default: "5000" },
      "behind-open-mib": { type: "string", default: "64" },
    },
  });
  const [sessions, acquires, bystanderCount, ttlMs, unopened, behindMiB] = [
    values.sessions,
    values.acquires,
    values.bystanders,
    values["ttl-ms"],
    values.unopened,
    values["behind-open-mib"],
  ].map(Number);
  if (!redisServerAvailable()) {
    process.stderr.write("stress: redis-server not found on PATH\n");
    return 1;
  }
  ensureCompiled();
  const redis = await startRedis();
  const coordinator = await startCoordinator(redis.url);
  const inspect = new Redis(redis.url);
  const phase = (...args: (string | number)[]) =>
    runPhase([args[0], coordinator.address, coordinator.pid, ...args.slice(1)]);
  const clients: TurnstileClient[] = [];
  try {
    process.stdout.write(`coordinator pid ${coordinator.pid} at ${coordinator.address}, redis ${redis.url}\n`);
    // Bystanders: the real client, one lock each, keepalives every TTL/3.
    const lost: string[] = [];
    const locks: Lock[] = [];
    for (let i = 0; i < bystanderCount; i++) {
      const client = new TurnstileClient(coordinator.address, { ttlMs });
      clients.push(client);
      client.on("reconnecting", () => lost.push(`bystander ${i}: session reconnecting`));
      client.on("expired", () => lost.push(`bystander ${i}: session expired`));
      const lock = await client.acquire(`bystander/${i}`, { owner: `b${i}` });
      lock.signal.addEventListener("abort", () => lost.push(`bystander ${i}: lock lost (${lock.signal.reason})`));
      locks.push(lock);
    }
    process.stdout.write(
      `\nflood: ${sessions} sessions × ${acquires} try-once acquires, written at once, from another process\n`,
    );
    // The least lease any bystander had left, sampled through the flood: how close renewals came to failing.
    let leastLeaseMs = ttlMs;
    const sampler = setInterval(() => {
      for (const l of locks) leastLeaseMs = Math.min(leastLeaseMs, l.leaseRemainingMs ?? 0);
    }, 50);
    // How late this (nearly idle) process ran its timers: the host's share of a bystander's delay.
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const flood = await phase("flood", sessions, acquires)
      .then(async (result) => {
        // One more lease: a bystander whose renewals fell behind would lose its lock within it.
        await new Promise((resolve) => setTimeout(resolve, ttlMs + 1000));
        return result;
      })
      .finally(() => {
        clearInterval(sampler);
        delay.disable();
      });
    process.stdout.write(`  answered in ${flood.ms} ms: ${JSON.stringify(flood.answers)}`);
    process.stdout.write(`; streams ended: ${JSON.stringify(flood.ended)}\n`);
    process.stdout.write(`  coordinator RSS ${JSON.stringify(flood.rssMiB)} MiB\n`);
    const stillHeld = await bystandersInRedis(inspect, clients);
    process.stdout.write(
      `  bystanders (${bystanderCount}, TTL ${ttlMs} ms): ${lost.length} told lost, ` +
        `${stillHeld}/${bystanderCount} locks held by their session in Redis; least lease left ${Math.round(leastLeaseMs)} ms; ` +
        `their process's event loop late by up to ${Math.round(delay.max / 1e6)} ms\n`,
    );

    process.stdout.write(`\nunopened: ${unopened} streams that never send Open\n`);
    const silent = await phase("unopened", unopened);
    process.stdout.write(`  ${JSON.stringify(silent)}\n`);

    const heldAfter = await bystandersInRedis(inspect, clients);
    process.stdout.write(`  bystanders after: ${lost.length} told lost, ${heldAfter}/${bystanderCount} held\n`);
    for (const line of lost) process.stdout.write(`    ${line}\n`);
    // Counted now: releasing a lock aborts its signal too.
    const lostCount = lost.length;
    await Promise.all(locks.map((l) => l.release().catch(() => {})));
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));

    process.stdout.write(`\nbehind a stalled Open: ${behindMiB} MiB of acquires while redis-server is SIGSTOPped\n`);
    const behind = await phase("behind-open", redis.process.pid!, behindMiB);
    process.stdout.write(`  ${JSON.stringify(behind)}\n`);
    const ok = lostCount === 0 && heldAfter === bystanderCount;
    process.stdout.write(`\n${ok ? "OK" : "FAIL"}: ${lostCount} bystander locks lost\n`);
    return ok ? 0 : 1;
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    inspect.disconnect();
    await coordinator.stop();
    await redis.stop();
  }
}

/** Runs one phase in a phase-worker process and resolves with its JSON result. */
// biome-ignore lint/suspicious/noExplicitAny: each phase's result shape is printed, not typed here
async function runPhase(args: (string | number)[]): Promise<any> {
  const child = spawn(process.execPath, ["--import", "tsx", WORKER, ...args.map(String)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`phase ${args[0]} exited ${code}: ${out}`);
  return JSON.parse(out.trim().split("\n").pop()!);
}

/** How many bystander locks Redis shows held by the bystander's own session. */
async function bystandersInRedis(redis: Redis, clients: TurnstileClient[]): Promise<number> {
  let held = 0;
  for (const [i, client] of clients.entries()) {
    const holders = await redis.zrange(lockKeys("turnstile", `bystander/${i}`)[0], "0", "-1");
    if (holders.includes(`${client.sessionId}:b${i}`)) held++;
  }
  return held;
}

process.exitCode = await main();
