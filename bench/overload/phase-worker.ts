import { readFileSync } from "node:fs";
import { floodBehindStalledOpen, unopenedStreams } from "./intake-phases.js";
import { runFlood } from "./run-flood.js";

/**
 * One attacking phase of `npm run test:stress`, run as its own process so its event loop is not
 * the bystanders': `tsx phase-worker.ts PHASE ADDRESS COORDINATOR_PID [ARGS]`, where PHASE is
 * `flood SESSIONS ACQUIRES`, `unopened COUNT` or `behind-open REDIS_PID MIB`. Prints one JSON line.
 */
async function main([phase, address, pid, ...args]: string[]): Promise<unknown> {
  const rss = () => rssMiB(Number(pid));
  switch (phase) {
    case "flood":
      return runFlood(address, Number(args[0]), Number(args[1]), rss);
    case "unopened":
      return unopenedStreams(address, Number(args[0]), rss);
    case "behind-open":
      return floodBehindStalledOpen(address, Number(args[0]), Number(args[1]), rss);
    default:
      throw new Error(`unknown phase "${phase}"`);
  }
}

/** Resident set size of a process in MiB (Linux /proc). */
function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Math.round(Number(kb ?? 0) / 1024);
}

process.stdout.write(`${JSON.stringify(await main(process.argv.slice(2)))}\n`);
process.exit(0);
