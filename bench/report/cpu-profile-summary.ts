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
  ["Turnstile server code (server/)", (_, u) => /\/server\//.test(u)],
  [
    "node streams, net, events, buffers",
    (_, u) => /internal\/(streams|stream_base|net|buffer)|node:(events|net|buffer)/.test(u),
  ],
  ["timers and microtasks", (fn, u) => /timers|task_queues/.test(u) || fn === "runMicrotasks"],
];

/**
 * Summarises the coordinator's CPU profile (the newest main-thread .cpuprofile in `dir`: node names
 * them CPU.<date>.<time>.<pid>.<thread>.<seq>, thread 0 the main one; a reused dir holds earlier runs'
 * too) as a table of self time per category, as a share of busy time (idle and start-up excluded).
 */
export function cpuProfileSummary(dir: string): string | undefined {
  const files = readdirSync(dir).filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (files.length === 0) return undefined;
  const file = files.map((f) => join(dir, f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame ?? { functionName: "", url: "" };
    const hit = CATEGORIES.find(([, test]) => test(frame.functionName, frame.url));
    const name = hit ? hit[0] : "other";
    totals.set(name, (totals.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const skip = new Set(["idle", "module loading (start-up)"]);
  let busy = 0;
  for (const [name, us] of totals) if (!skip.has(name)) busy += us;
  const rows = [...totals]
    .filter(([name]) => !skip.has(name))
    .sort((a, b) => b[1] - a[1])
    .map(([name, us]) => [name, `${((100 * us) / busy).toFixed(1)}%`]);
  return [
    `Coordinator main thread, \`${file}\`: ${(busy / 1e6).toFixed(1)} s busy (self time by category).`,
    "",
    table(["category", "share of busy time"], rows),
  ].join("\n");
}
