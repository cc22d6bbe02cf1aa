// What each script of a lock's hot path costs Redis: `npx tsx bench/script-cost.ts [RUNS]` (default
// 2000 runs per path). Starts a redis-server of its own, runs each path RUNS times one at a time through
// the store's LockScripts (the ARGV of the script tests' fixture), and prints per run: the time Redis
// spent in the script (INFO commandstats usec of EVALSHA, which includes its calls), how many
// redis.call it made and their own time, beside two baselines: the bench's trivial two-call script, and
// each script cut after its includes (its header and the include functions it defines, then `return 0`).
// What is left between a script's time and its calls' own time is Lua: the closures its includes
// define, its strings and tables, and the step into and out of each call.
import { readFileSync } from "node:fs";
import { Redis } from "ioredis";
import { LockScripts, type ScriptArg } from "../server/store/redis/scripts/runner/lock-scripts.js";
import { scriptSource } from "../server/store/redis/scripts/runner/script-source.js";
import { startRedis } from "../test/harness/redis-server.js";
import {
  type AcquireInput,
  acquire,
  keys,
  type ReleaseInput,
  release,
  type ScriptFixture,
} from "../test/store/scripts/script-fixture.js";
import { TRIVIAL_SCRIPT } from "./anatomy/floors.js";

/** One path's cost per run. */
export interface ScriptCost {
  path: string;
  /** The reply code every run of the path returned (the script's contract header). */
  code: number;
  /** µs Redis spent in the script, its calls included (commandstats). */
  scriptUs: number;
  /** redis.call made per run. */
  calls: number;
  /** µs of those calls' own (commandstats of each command). */
  callsUs: number;
}

interface Counters {
  processed: number;
  usec: Map<string, number>;
  calls: Map<string, number>;
}

async function counters(redis: Redis): Promise<Counters> {
  const info = await redis.info("everything");
  const usec = new Map<string, number>();
  const calls = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    calls.set(m[1], Number(m[2]));
    usec.set(m[1], Number(m[3]));
  }
  return { processed: Number(/^total_commands_processed:(\d+)/m.exec(info)?.[1]), usec, calls };
}

/** Runs `op` for i in [0, runs) and returns its cost per run; every reply must have the same first element. */
async function measure(
  redis: Redis,
  path: string,
  runs: number,
  op: (i: number) => Promise<unknown[]>,
): Promise<ScriptCost> {
  const before = await counters(redis);
  const codes = new Set<number>();
  for (let i = 0; i < runs; i++) codes.add(Number((await op(i))[0]));
  const after = await counters(redis);
  if (codes.size !== 1) throw new Error(`${path}: expected one reply code, got ${[...codes].join(", ")}`);
  const delta = (m: "usec" | "calls", name: string) => (after[m].get(name) ?? 0) - (before[m].get(name) ?? 0);
  let callsUs = 0;
  for (const name of after.usec.keys()) if (name !== "evalsha" && name !== "info") callsUs += delta("usec", name);
  const scripts = delta("calls", "evalsha");
  // total_commands_processed counts the EVALSHA, its redis.calls and the INFO that read `before`.
  const calls = (after.processed - before.processed - 1 - scripts) / runs;
  return { path, code: [...codes][0], scriptUs: delta("usec", "evalsha") / runs, calls, callsUs: callsUs / runs };
}

/** The expanded text of script `name` up to the end of its includes, then `return 0`. */
function definitionsOnly(name: "acquire" | "release"): string {
  const raw = readFileSync(new URL(`../server/store/redis/scripts/${name}.lua`, import.meta.url), "utf8");
  const lines = raw.replace(/\n$/, "").split("\n");
  let last = -1;
  lines.forEach((line, i) => {
    if (/^\s*---\s*@include\b/.test(line)) last = i;
  });
  const body = `${lines.slice(last + 1).join("\n")}\n`;
  const expanded = scriptSource(name);
  if (!expanded.endsWith(body)) throw new Error(`${name}.lua: its expanded text does not end with its body`);
  return `${expanded.slice(0, expanded.length - body.length)}return 0\n`;
}

/** Measures every path on a fresh redis-server; `runs` runs each. */
export async function measureScriptCosts(runs: number): Promise<ScriptCost[]> {
  const server = await startRedis();
  const redis = new Redis(server.url);
  try {
    const f: ScriptFixture = { server, redis, scripts: new LockScripts(redis) };
    const names = Array.from({ length: runs }, (_, i) => `cost-${i}`);
    const take = (i: number, a: AcquireInput) => acquire(f, names[i], { request: `r${i}`, ...a });
    const drop = (i: number, r: ReleaseInput) => release(f, names[i], r);
    // Every lock has run a cycle before it is measured: its version counter exists, as on a lock in use.
    for (let i = 0; i < runs; i++) {
      await take(i, { session: "s1" });
      await drop(i, { session: "s1" });
    }
    const out: ScriptCost[] = [];
    out.push(await measure(redis, "acquire, free lock (granted)", runs, (i) => take(i, { session: "s1" })));
    out.push(await measure(redis, "release, nobody waiting (released)", runs, (i) => drop(i, { session: "s1" })));
    for (let i = 0; i < runs; i++) await take(i, { session: "s1" });
    out.push(await measure(redis, "acquire, lock held (queued)", runs, (i) => take(i, { session: "s2" })));
    out.push(
      await measure(redis, "release that grants the waiter (released)", runs, (i) => drop(i, { session: "s1" })),
    );
    for (let i = 0; i < runs; i++) await drop(i, { session: "s2" });
    // The baselines run with the same keys and ARGV as the scripts above; their reply is not read (code 0).
    const baseline = async (path: string, source: string, args: (i: number) => ScriptArg[]) => {
      const sha = (await redis.script("LOAD", source)) as string;
      return measure(redis, path, runs, async (i) => {
        await redis.evalsha(sha, keys(names[i]).all.length, ...keys(names[i]).all, ...args(i));
        return [0];
      });
    };
    const events = (i: number) => keys(names[i]).events;
    out.push(await baseline("trivial script (SET, GET)", TRIVIAL_SCRIPT, () => ["v"]));
    out.push(
      await baseline("acquire.lua cut after its includes", definitionsOnly("acquire"), (i) => [
        "s1",
        "o",
        `r${i}`,
        30_000,
        1,
        0,
        1,
        "c1",
        60_000,
        "",
        events(i),
        "watched",
        "0 0",
      ]),
    );
    out.push(
      await baseline("release.lua cut after its includes", definitionsOnly("release"), (i) => [
        "s1",
        "o",
        "",
        "one",
        "c1",
        60_000,
        names[i],
        "t:grants:",
        events(i),
        "watched",
        "0 0",
      ]),
    );
    return out;
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = Number(process.argv[2] ?? 2000);
  const costs = await measureScriptCosts(runs);
  process.stdout.write(`${runs} runs per path, one at a time; per run:\n`);
  for (const c of costs)
    process.stdout.write(
      `${c.path.padEnd(44)} code ${String(c.code).padStart(2)}  script ${c.scriptUs.toFixed(1).padStart(5)} µs  ${c.calls.toFixed(1).padStart(4)} calls, their own ${c.callsUs.toFixed(1).padStart(4)} µs  Lua and call steps ${(c.scriptUs - c.callsUs).toFixed(1).padStart(5)} µs\n`,
    );
}
