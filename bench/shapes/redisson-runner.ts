import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { LockImpl } from "../impls/lock-impl.js";
import type { Discipline, HandOffResult } from "../workloads/hand-off.js";
import type { SpreadResult } from "../workloads/spread.js";
import { parseRedissonOutput, REDISSON_IDS } from "./redisson-lines.js";

const HARNESS = fileURLToPath(new URL("../redisson/", import.meta.url));
const VERSION = "3.37.0"; // bench/redisson/pom.xml
const RUN_TIMEOUT_MS = 10 * 60_000;

/** The Redisson rows' labels in the report (they run in the Java harness, not through connect()). */
export const REDISSON_IMPLS: LockImpl[] = [
  {
    id: REDISSON_IDS.rlock,
    label: "Redisson RLock, not FIFO (warmed JVM): what giving up FIFO buys",
    waits: "waiters subscribe to a pub/sub channel; unlock publishes and the woken threads race (not FIFO)",
    version: `Redisson ${VERSION} (bench/redisson, Java 17)`,
  },
  {
    id: REDISSON_IDS.fair,
    label: "Redisson RFairLock, FIFO (warmed JVM)",
    waits: "FIFO queue in Redis; the head waiter is woken by pub/sub",
    version: `Redisson ${VERSION} (bench/redisson, Java 17)`,
  },
].map((i) => ({
  ...i,
  connect: () => Promise.reject(new Error("the Redisson rows run in bench/redisson (Java)")),
}));

/** Why the Redisson rows cannot run here (mvn or java missing), or undefined when they can. */
export function redissonUnavailable(): string | undefined {
  for (const [tool, args] of [
    ["java", ["-version"]],
    ["mvn", ["-v"]],
  ] as const) {
    if (spawnSync(tool, [...args], { stdio: "ignore" }).status !== 0)
      return `the Redisson rows were skipped: \`${tool}\` is not on PATH (they need Java 17 and Maven)`;
  }
  return undefined;
}

/**
 * Builds bench/redisson with Maven (Redisson from Maven Central) and runs it on `redisUrl`: each
 * configuration (each hand-off size in each discipline) warms the JVM for `warmupMs`, then is measured
 * for `measureMs`.
 */
export async function runRedisson(
  redisUrl: string,
  o: { warmupMs: number; measureMs: number; handOff: number[]; spread: number[]; disciplines: readonly Discipline[] },
): Promise<{ handOff: HandOffResult[]; spread: SpreadResult[] }> {
  const built = spawnSync("mvn", ["-q", "-B", "package", "-DskipTests"], { cwd: HARNESS, encoding: "utf8" });
  if (built.status !== 0)
    throw new Error(`mvn package in bench/redisson failed: ${(built.stdout + built.stderr).slice(-800)}`);
  const args = [
    "-cp",
    "target/redisson-bench-0.1.0.jar:target/lib/*",
    "turnstile.bench.RedissonBench",
    redisUrl.replace(/\/\d*$/, ""),
    String(o.warmupMs),
    String(o.measureMs),
    o.handOff.join(","),
    o.spread.join(","),
    o.disciplines.join(","),
  ];
  const child = spawn("java", args, { cwd: HARNESS, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-2000);
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`the Redisson harness exited (${code}): ${stderr}`);
  return parseRedissonOutput(stdout);
}
