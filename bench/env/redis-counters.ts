import type { Redis } from "ioredis";

/** One reading of the Redis counters the report uses. */
export interface RedisSnapshot {
  totalCommands: number;
  /** Calls per command name (lower case), from INFO commandstats; includes calls made inside scripts. */
  calls: Map<string, number>;
  /** µs spent running each command (lower case), from INFO commandstats; a script's includes its calls'. */
  usec: Map<string, number>;
  /** used_cpu_user + used_cpu_sys, in seconds. */
  cpuSeconds: number;
  usedMemoryBytes: number;
}

/** What happened in Redis between two snapshots. */
export interface RedisDelta {
  /** total_commands_processed delta, less the INFO calls of the snapshots themselves. */
  commands: number;
  /** Calls of the given (wire) commands: what clients sent over the connection. */
  wireCommands: number;
  /** µs Redis spent running the wire commands (a script's whole run: its Lua and its calls), commandstats. */
  wireUsec: number;
  cpuSeconds: number;
  calls: Map<string, number>;
}

/** Reads INFO stats, commandstats, cpu and memory in one INFO call. */
export async function redisSnapshot(redis: Redis): Promise<RedisSnapshot> {
  const info = await redis.info("everything");
  const field = (name: string) => Number(info.match(new RegExp(`^${name}:([\\d.]+)`, "m"))?.[1] ?? Number.NaN);
  const calls = new Map<string, number>();
  const usec = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    calls.set(m[1], Number(m[2]));
    usec.set(m[1], Number(m[3]));
  }
  return {
    totalCommands: field("total_commands_processed"),
    calls,
    usec,
    cpuSeconds: field("used_cpu_user") + field("used_cpu_sys"),
    usedMemoryBytes: field("used_memory"),
  };
}

/** The difference `after - before`; `wire` names the commands counted as sent by clients. */
export function redisDelta(before: RedisSnapshot, after: RedisSnapshot, wire: readonly string[] = []): RedisDelta {
  const calls = new Map<string, number>();
  for (const [name, n] of after.calls) {
    const d = n - (before.calls.get(name) ?? 0);
    if (d > 0 && name !== "info") calls.set(name, d);
  }
  let wireCommands = 0;
  let wireUsec = 0;
  for (const name of wire) {
    wireCommands += calls.get(name) ?? 0;
    wireUsec += (after.usec.get(name) ?? 0) - (before.usec.get(name) ?? 0);
  }
  return {
    commands: after.totalCommands - before.totalCommands - 1,
    wireCommands,
    wireUsec,
    cpuSeconds: after.cpuSeconds - before.cpuSeconds,
    calls,
  };
}
