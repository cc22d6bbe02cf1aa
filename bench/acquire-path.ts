// npx tsx bench/acquire-path.ts [--list]: how many project source files one acquire touches end
// to end. An in-process coordinator on the embedded store and a TurnstileClient connect and do one
// warm-up acquire + release; then V8's precise coverage (call counts, reset at every take) records
// exactly one more acquire + release, and every project file (client/, server/, gen/, wire/) with
// at least one function called during it is counted. --list prints the files, in path order.
import { Session } from "node:inspector/promises";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { TurnstileClient } from "../client/index.js";
import { Coordinator } from "../server/coordinator.js";
import { MemoryStore } from "../server/store/memory/memory-store.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const LAYERS = ["client", "server", "gen", "wire"] as const;

interface ScriptCoverage {
  url: string;
  functions: { ranges: { count: number }[] }[];
}

/** The project file a coverage URL names (relative to the repo root), or undefined for others. */
function projectFile(url: string): string | undefined {
  if (!url.startsWith("file://")) return undefined;
  const path = fileURLToPath(url.replace(/\?.*$/, ""));
  if (!path.startsWith(ROOT)) return undefined;
  const relative = path.slice(ROOT.length);
  return LAYERS.some((layer) => relative.startsWith(`${layer}/`)) ? relative : undefined;
}

const inspector = new Session();
inspector.connect();
await inspector.post("Profiler.enable");
await inspector.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });

const coordinator = new Coordinator({
  store: new MemoryStore(),
  log: pino({ level: "silent" }),
  listen: "127.0.0.1:0",
  shutdownGraceMs: 200,
});
const address = `127.0.0.1:${await coordinator.start()}`;
const client = new TurnstileClient(address, { ttlMs: 30_000 });
try {
  await client.connect();
  await (await client.acquire("acquire-path/warm-up")).release();
  await inspector.post("Profiler.takePreciseCoverage"); // resets the counters
  const lock = await client.acquire("acquire-path/measured");
  await lock.release();
  const { result } = (await inspector.post("Profiler.takePreciseCoverage")) as { result: ScriptCoverage[] };
  const touched = new Set<string>();
  for (const script of result) {
    const file = projectFile(script.url);
    if (file !== undefined && script.functions.some((f) => f.ranges[0]?.count > 0)) touched.add(file);
  }
  const files = [...touched].sort();
  const byLayer = LAYERS.map((layer) => `${layer} ${files.filter((f) => f.startsWith(`${layer}/`)).length}`);
  process.stdout.write(`files touched by one acquire + release: ${files.length} (${byLayer.join(", ")})\n`);
  if (process.argv.includes("--list")) process.stdout.write(`${files.map((f) => `  ${f}`).join("\n")}\n`);
} finally {
  await inspector.post("Profiler.stopPreciseCoverage");
  inspector.disconnect();
  await client.close();
  await coordinator.stop();
}
