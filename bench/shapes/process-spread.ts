import { randomBytes } from "node:crypto";
import { processUsage } from "../env/process-usage.js";
import { summarize } from "../stats.js";
import { type CounterSources, measureWindow } from "../workloads/measurement-window.js";
import type { SpreadResult } from "../workloads/spread.js";
import { ContenderProcesses } from "./contender-processes.js";

/** Settings of a spread run with its workers in contender processes, over one or more coordinators. */
export interface ProcessSpreadOptions {
  /** Coordinators; worker i of the run uses addresses[i % n]. */
  addresses: string[];
  /** Their process ids, for their CPU time. */
  coordinatorPids: number[];
  processes: number;
  workersPerProcess: number;
  warmupMs: number;
  measureMs: number;
  /** Redis counters (and the first coordinator's CPU, as in the one-process rows). */
  sources: CounterSources;
  /** More processes whose CPU over the window is reported (a Redis Cluster's masters). */
  otherPids?: number[];
  progress: (detail: string) => void;
}

/** A spread run in processes, with the CPU of each process over the window. */
export interface ProcessSpreadResult extends SpreadResult {
  /** CPU of each coordinator over the window, as a share of one core. */
  coordinatorCores: number[];
  /** CPU of the busiest contender process, and of all of them, as shares of one core. */
  clientCoresMax: number;
  clientCores: number;
  /** Redis's CPU over the window, as a share of one core. */
  redisCores?: number;
  /** CPU of each of `otherPids` over the window, as a share of one core. */
  otherCores?: number[];
}

/**
 * The spread workload with its workers in contender processes (the compiled client under plain
 * node): each worker loops acquire → release on a lock of its own, on the coordinators round robin.
 */
export async function runProcessSpread(o: ProcessSpreadOptions): Promise<ProcessSpreadResult> {
  const workers = o.processes * o.workersPerProcess;
  const lock = `bench-spread-proc-${workers}-${randomBytes(4).toString("hex")}`;
  o.progress(`starting ${o.processes} contender processes × ${o.workersPerProcess} workers`);
  const fleet = await ContenderProcesses.start(
    Array.from({ length: o.processes }, (_, p) => ({
      mode: "spread",
      addresses: o.addresses,
      lock: `${lock}-p${p}`,
      workers: o.workersPerProcess,
      offset: p * o.workersPerProcess,
    })),
  );
  fleet.broadcast({ type: "start" });
  const cpuOf = (pids: number[]) => pids.map((pid) => processUsage(pid)?.cpuSeconds ?? Number.NaN);
  let before = { clients: [] as number[], coordinators: [] as number[], others: [] as number[] };
  const state = {
    set measuring(on: boolean) {
      fleet.broadcast({ type: "measure", on });
      if (on)
        before = {
          clients: fleet.cpuSeconds(),
          coordinators: cpuOf(o.coordinatorPids),
          others: cpuOf(o.otherPids ?? []),
        };
    },
  };
  const counters = await measureWindow(o, state as { measuring: boolean }, (phase, ms) =>
    o.progress(`${phase} ${(ms / 1000).toFixed(1)} s`),
  );
  const clientCpu = fleet.cpuSeconds().map((c, i) => c - before.clients[i]);
  const coordinatorCores = cpuOf(o.coordinatorPids).map((c, i) => (c - before.coordinators[i]) / counters.seconds);
  const otherCores = o.otherPids && cpuOf(o.otherPids).map((c, i) => (c - before.others[i]) / counters.seconds);
  counters.clientCpuSeconds = clientCpu.reduce((a, b) => a + b, 0);
  o.progress("stopping contender processes");
  const results = await fleet.stop();
  const acquireMs = results.flatMap((r) => (Array.isArray(r?.acquireMs) ? (r.acquireMs as number[]) : []));
  const cycles = results.reduce((sum, r) => sum + (typeof r?.cycles === "number" ? r.cycles : 0), 0);
  const errors = results.reduce((sum, r) => sum + (typeof r?.errors === "number" ? r.errors : 0), 0);
  return {
    impl: "turnstile-processes",
    workers,
    cycles,
    cyclesPerS: cycles / counters.seconds,
    acquire: summarize(acquireMs),
    acquireMs,
    violations: 0,
    errors,
    counters,
    coordinatorCores,
    clientCoresMax: Math.max(...clientCpu) / counters.seconds,
    clientCores: counters.clientCpuSeconds / counters.seconds,
    redisCores: counters.redis ? counters.redis.cpuSeconds / counters.seconds : undefined,
    otherCores,
  };
}
