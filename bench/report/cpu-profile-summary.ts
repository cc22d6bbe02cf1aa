import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { table } from "./format.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

// First match wins: what each sampled frame's self time is counted as.
const CATEGORIES: [string, (fn: string, url: string) => boolean][] = [
  ["idle", (fn) => fn === "(idle)"],
  ["module loading (start-up)", (_, u) => /modules\/(esm|cjs)|cjs-module-lexer|bootstrap\/realm/.test(u)],
  ["garbage collection", (fn) => fn === "(garbage collector)"],
  ["native, not attributed (HTTP/2 framing, libuv)", (fn) => fn === "(program)"],
  ["socket writes (system calls)", (fn, u) => !u && /^write|writev|Utf8String|Buffer$/.test(fn)],
  ["grpc-js and node:http2", (_, u) => /node_modules\/@grpc|internal\/http2/.test(u)],
  ["ioredis", (_, u) => /node_modules\/(ioredis|redis-errors|denque|standard-as-callback|cluster-key-slot)/.test(u)],
  ["protobuf encode/decode", (_, u) => /node_modules\/@bufbuild|\/gen\//.test(u)],
  ["Turnstile's Redis store (server/store/redis/)", (_, u) => /\/server\/store\/redis\//.test(u)],
  ["Turnstile server code (server/, the rest)", (_, u) => /\/server\//.test(u)],
  [
    "node streams, net, events, buffers",
    (_, u) => /internal\/(streams|stream_base|net|buffer)|node:(events|net|buffer)/.test(u),
  ],
  ["timers and microtasks", (fn, u) => /timers|task_queues/.test(u) || fn === "runMicrotasks"],
];

const SKIPPED = new Set(["idle", "module loading (start-up)"]);

/** One coordinator's profile: its file, busy µs (idle and start-up left out) and self µs per category. */
export interface CategoryTimes {
  file: string;
  busyUs: number;
  byCategory: Map<string, number>;
}

/**
 * Reads the newest main-thread .cpuprofile in `dir` (node names them CPU.<date>.<time>.<pid>.<thread>.<seq>,
 * thread 0 the main one; a reused dir holds earlier runs' too) and sums its self time per category.
 */
export function categoryTimes(dir: string): CategoryTimes | undefined {
  const files = readdirSync(dir, { withFileTypes: true })
    .filter((f) => f.isFile() && /\.\d+\.0\.\d+\.cpuprofile$/.test(f.name))
    .map((f) => join(dir, f.name));
  if (files.length === 0) return undefined;
  const file = files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byCategory = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame ?? { functionName: "", url: "" };
    const hit = CATEGORIES.find(([, test]) => test(frame.functionName, frame.url));
    const name = hit ? hit[0] : "other";
    byCategory.set(name, (byCategory.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  for (const name of SKIPPED) byCategory.delete(name);
  let busyUs = 0;
  for (const us of byCategory.values()) busyUs += us;
  return { file, busyUs, byCategory };
}

/**
 * The coordinators' CPU profiles as one table of self time per category, as a share of each one's busy
 * time: the Redis-backed coordinator's (newest profile in `dir`) and, when it ran too, the embedded-store
 * coordinator's (in `embeddedDir`), which served the same workloads; what only the Redis-backed one has
 * is its store's path (ioredis, server/store/redis/, the Redis socket's writes).
 */
export function cpuProfileSummary(dir: string, embeddedDir?: string): string | undefined {
  const redis = categoryTimes(dir);
  if (!redis) return undefined;
  const embedded = embeddedDir ? categoryTimes(embeddedDir) : undefined;
  const share = (p: CategoryTimes, name: string) => `${((100 * (p.byCategory.get(name) ?? 0)) / p.busyUs).toFixed(1)}%`;
  const names = [...redis.byCategory].sort((a, b) => b[1] - a[1]).map(([name]) => name);
  for (const name of embedded?.byCategory.keys() ?? []) if (!names.includes(name)) names.push(name);
  const seconds = (p: CategoryTimes) => `${(p.busyUs / 1e6).toFixed(1)} s busy`;
  const lines = [`Coordinator main thread on Redis, \`${redis.file}\`: ${seconds(redis)} (self time by category).`];
  if (embedded)
    lines.push(
      `The embedded-store coordinator, same workloads, \`${embedded.file}\`: ${seconds(embedded)}. Each served`,
      "its own rate (the tables above): compare a category's share, and its CPU per hand-off as that share of",
      "the row's coordinator CPU.",
    );
  const head = embedded ? ["category", "on Redis", "embedded store"] : ["category", "share of busy time"];
  const rows = names.map((name) =>
    embedded ? [name, share(redis, name), share(embedded, name)] : [name, share(redis, name)],
  );
  return [lines.join(" "), "", table(head, rows)].join("\n");
}
