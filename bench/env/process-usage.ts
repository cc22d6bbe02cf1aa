import { readFileSync } from "node:fs";

const CLOCK_TICKS_PER_S = 100; // USER_HZ on Linux

/** CPU time and resident memory of a process, read from /proc (Linux only). */
export interface ProcessUsage {
  cpuSeconds: number;
  rssBytes: number;
}

/** Reads /proc/<pid>/stat and /proc/<pid>/status; undefined where /proc is missing. */
export function processUsage(pid: number): ProcessUsage | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const rssKb = Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? Number.NaN);
    return { cpuSeconds: ticks / CLOCK_TICKS_PER_S, rssBytes: rssKb * 1024 };
  } catch {
    return undefined;
  }
}
