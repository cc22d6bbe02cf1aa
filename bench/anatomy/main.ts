// `npx tsx bench/anatomy/main.ts [--quick]`: the anatomy of a hand-off alone (npm run bench runs it
// too and puts the same tables in BENCHMARKS.md). Starts its own redis-server and coordinator,
// prints the legs of a hand-off (8 contenders; in both disciplines, or `--discipline at-once|after-turn`)
// and of an uncontended acquire beside the bare floors.
import { loadavg } from "node:os";
import { startRedis } from "../../test/harness/redis-server.js";
import { ensureCompiled } from "../env/compiled-build.js";
import { anatomySection } from "../report/anatomy-section.js";
import { DISCIPLINES, type Discipline } from "../workloads/hand-off.js";
import { runAnatomy } from "./run-anatomy.js";

const quick = process.argv.includes("--quick");
const asked = process.argv[process.argv.indexOf("--discipline") + 1];
const disciplines = DISCIPLINES.filter((d: Discipline) => !process.argv.includes("--discipline") || d === asked);
if (disciplines.length === 0) throw new Error(`--discipline: expected at-once or after-turn, got "${asked}"`);
ensureCompiled();
const redis = await startRedis();
try {
  const loadStart = loadavg()[0];
  const result = await runAnatomy({
    redisUrl: redis.url,
    contenders: 8,
    disciplines,
    warmupMs: quick ? 500 : 1000,
    measureMs: quick ? 1500 : 3000,
    floorTrips: quick ? 1000 : 3000,
    progress: (d) => process.stderr.write(`\ranatomy: ${d.padEnd(60)}`),
  });
  process.stderr.write("\n");
  process.stdout.write(
    `${anatomySection(result)}\n\n1-min load average ${loadStart.toFixed(2)} → ${loadavg()[0].toFixed(2)}\n`,
  );
} finally {
  await redis.stop();
}
