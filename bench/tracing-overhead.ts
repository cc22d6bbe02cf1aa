import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { TurnstileClient } from "../client/index.js";
import { Coordinator } from "../server/coordinator.js";
import { RedisStore } from "../server/store/redis/redis-store.js";
import { startOtelTracing } from "../server/tracing/otel-tracing.js";
import type { Tracing } from "../server/tracing/tracing.js";
import { startRedis } from "../test/harness/redis-server.js";

// `npx tsx bench/tracing-overhead.ts [rounds] [seconds]`: what tracing costs a coordinator on Redis.
// Rounds rotate through the modes (a fresh coordinator each): off, on (--otlp-endpoint to a local
// OTLP sink that answers 200, every trace recorded) and on at --otlp-sample-ratio 0.1; each round
// has CONTENDERS clients acquiring and releasing their own locks in a loop (no caller trace).

const CONTENDERS = 8;
/** undefined: tracing off; else the sample ratio. */
const MODES = [undefined, 1, 0.1] as const;

interface Round {
  mode: number | undefined;
  cycles: number;
  seconds: number;
  latenciesMs: number[];
}

async function round(redisUrl: string, sinkUrl: string, mode: number | undefined, seconds: number): Promise<Round> {
  const tracing: Tracing | undefined =
    mode === undefined ? undefined : await startOtelTracing({ endpoint: sinkUrl }, { sampleRatio: mode });
  const coordinator = new Coordinator({
    store: new RedisStore({ url: redisUrl }),
    log: pino({ level: "silent" }),
    listen: "127.0.0.1:0",
    tracing,
  });
  const address = `127.0.0.1:${await coordinator.start()}`;
  const clients = Array.from({ length: CONTENDERS }, () => new TurnstileClient(address, { clientName: "bench" }));
  await Promise.all(clients.map((c) => c.connect()));
  const latenciesMs: number[] = [];
  const start = performance.now();
  const until = start + seconds * 1000;
  await Promise.all(
    clients.map(async (c, i) => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const lock = await c.acquire(`bench/tracing/${i}`);
        await lock.release();
        latenciesMs.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  await Promise.all(clients.map((c) => c.close()));
  await coordinator.stop();
  await tracing?.shutdown();
  return { mode, cycles: latenciesMs.length, seconds: elapsed, latenciesMs };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const seconds = Number(process.argv[3] ?? 5);
  const redis = await startRedis();
  let spansPosted = 0;
  const sink = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      spansPosted++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const results: Round[] = [];
  try {
    for (let r = 0; r < rounds; r++)
      for (const mode of MODES) results.push(await round(redis.url, sinkUrl, mode, seconds));
  } finally {
    sink.close();
    await redis.stop();
  }
  console.log(
    `${CONTENDERS} clients, own lock each, acquire+release cycles; ${rounds} rounds of ${seconds} s per mode`,
  );
  for (const mode of MODES) {
    const mine = results.filter((r) => r.mode === mode);
    const rate = mine.reduce((s, r) => s + r.cycles, 0) / mine.reduce((s, r) => s + r.seconds, 0);
    const sorted = mine.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
    const [p50, p99] = [percentile(sorted, 50), percentile(sorted, 99)];
    const perRound = mine.map((r) => Math.round(r.cycles / r.seconds)).join(", ");
    console.log(
      `tracing ${mode === undefined ? "off" : `on, ratio ${mode}`}: ${Math.round(rate)} cycles/s (rounds: ${perRound}); ` +
        `cycle p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`,
    );
  }
  console.log(`OTLP export requests received: ${spansPosted}`);
}

await main();
process.exit(0);
