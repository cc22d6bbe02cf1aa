import { type ChildProcess, fork } from "node:child_process";
import { createWriteStream, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChildEvent } from "./check-failover-log.js";
import { type CoordinatorProcess, spawnCoordinatorWith } from "./coordinator-process.js";

const CHILD = fileURLToPath(new URL("./failover-child.ts", import.meta.url));

/**
 * Starts `count` coordinators with the given store flags, each draining its output to
 * `<logDir>/coordinator-<i>.log` (a full pipe would stall it), for the failover fault tests.
 */
export async function spawnLoggedCoordinators(
  count: number,
  args: string[],
  logDir: string,
): Promise<CoordinatorProcess[]> {
  const coordinators: CoordinatorProcess[] = [];
  for (let i = 0; i < count; i++) {
    const c = await spawnCoordinatorWith(args);
    const log = createWriteStream(join(logDir, `coordinator-${i}.log`));
    c.process.stdout?.pipe(log);
    c.process.stderr?.pipe(log);
    coordinators.push(c);
  }
  return coordinators;
}

/** The client processes of a fault test and the events they report, in arrival order. */
export interface FailoverWorkers {
  readonly events: ChildEvent[];
  readonly children: ChildProcess[];
  /** Asks every worker to stop and resolves once all have exited. */
  stop(): Promise<void>;
}

/**
 * Forks `count` failover-child workers contending on `specs` ("lock:NAME", "semaphore:NAME:LIMIT",
 * "set:NAME+NAME…"), each acquire waiting `waitMs` (default 60 s), each worker preferring one of
 * `addresses` in turn so grants cross coordinators. It plays the
 * token-checking resource: per exclusive name, a write whose token is not above the highest written
 * is refused (the semaphore `semaphoreName` is not checked that way).
 */
export function startFailoverWorkers(
  count: number,
  addresses: string[],
  ttlMs: number,
  specs: string[],
  semaphoreName: string,
  waitMs?: number,
): FailoverWorkers {
  const events: ChildEvent[] = [];
  const children: ChildProcess[] = [];
  const highest = new Map<string, bigint>();
  const exited: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const mine = [addresses[i % addresses.length], addresses[(i + 1) % addresses.length]].join(",");
    const child = fork(CHILD, [`w${i}`, mine, String(ttlMs), ...specs], {
      execArgv: ["--import", "tsx"],
      env: waitMs === undefined ? process.env : { ...process.env, TURNSTILE_FAILOVER_WAIT_MS: String(waitMs) },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    children.push(child);
    exited.push(new Promise((resolve) => child.once("exit", () => resolve())));
    child.on("message", (e: ChildEvent) => {
      events.push(e);
      if (e.ev !== "write") return;
      const name = e.name as string;
      const token = BigInt(e.token as string);
      const exclusive = name !== semaphoreName;
      const ok = !exclusive || token > (highest.get(name) ?? -1n);
      if (ok && exclusive) highest.set(name, token);
      child.send({ written: ok });
    });
  }
  return {
    events,
    children,
    async stop() {
      for (const child of children) child.send("stop");
      await Promise.all(exited);
    },
  };
}

/** Writes the faults and events as JSON lines to `<logDir>/events.jsonl`, for a post-mortem next to the coordinators' logs. */
export function writeEventLog(logDir: string, faults: object[], events: ChildEvent[]): void {
  const line = (e: object) => JSON.stringify(e, (_k, v) => (typeof v === "bigint" ? String(v) : v));
  writeFileSync(join(logDir, "events.jsonl"), [...faults, ...events].map(line).join("\n"));
}
