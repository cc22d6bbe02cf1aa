/** One event of a many-locks worker (many-locks-child.ts); `at` is process.hrtime.bigint() as text. */
export interface ManyLocksEvent {
  worker: string;
  ev: "start" | "end" | "grant" | "exit" | "done";
  id?: string;
  name?: string;
  /** On `start` of an AcquireAll: its names. */
  set?: string[];
  token?: string;
  outcome?: string;
  /** On `end` with outcome "deadlock": the cycle the coordinator named, as (owner, name it waits for). */
  cycle?: { owner: string; name: string }[];
  at: string;
}

/** What the deadlock checks saw once they all passed. */
export interface DeadlockLogReport {
  /** DEADLOCK answers, each checked against the cycle in the workers' logs at that moment. */
  deadlocks: number;
  /** Wait-for cycles seen in the logs (each ended by a DEADLOCK answer or otherwise). */
  cycles: number;
  /** The longest any cycle lasted in the logs, in ms. */
  longestCycleMs: number;
  /** AcquireAll requests by outcome ("granted", or the failure reason). */
  sets: Map<string, number>;
}

/**
 * Replays the workers' events in time order, keeping who holds each name and what each worker
 * waits for one by one (a worker waiting for a set holds nothing, so it has no wait-for edge). Each
 * worker waits for at most one name and each name has one holder, so following the edges from a
 * worker finds its cycle, if any. Throws an Error naming the first violation: a DEADLOCK answer whose
 * cycle was not a cycle in the logs just before it; a cycle that lasted over `boundMs`; a worker that
 * got DEADLOCK while not waiting on a cycle.
 */
export function checkDeadlockLog(events: ManyLocksEvent[], boundMs: number): DeadlockLogReport {
  const sorted = [...events].sort((a, b) => (BigInt(a.at) < BigInt(b.at) ? -1 : BigInt(a.at) > BigInt(b.at) ? 1 : 0));
  const holder = new Map<string, string>();
  const waits = new Map<string, string>();
  const since = new Map<string, bigint>();
  const sets = new Set<string>();
  const report: DeadlockLogReport = { deadlocks: 0, cycles: 0, longestCycleMs: 0, sets: new Map() };
  const ms = (ns: bigint) => Number(ns / 1_000_000n);
  const closeCycle = (key: string, at: bigint) => {
    const lasted = ms(at - (since.get(key) as bigint));
    report.longestCycleMs = Math.max(report.longestCycleMs, lasted);
    if (lasted > boundMs) throw new Error(`cycle ${key} lasted ${lasted} ms (bound ${boundMs} ms)`);
    since.delete(key);
  };
  for (const e of sorted) {
    const at = BigInt(e.at);
    if (e.ev === "end" && e.outcome === "deadlock") checkAnswer(e, cyclesOf(waits, holder));
    if (e.ev === "start" && e.set) sets.add(e.id as string);
    else if (e.ev === "start") waits.set(e.worker, e.name as string);
    else if (e.ev === "end") {
      waits.delete(e.worker);
      if (sets.has(e.id as string)) report.sets.set(e.outcome ?? "?", (report.sets.get(e.outcome ?? "?") ?? 0) + 1);
      if (e.outcome === "deadlock") report.deadlocks++;
    } else if (e.ev === "grant") {
      // The grant ends the wait (its `end` follows at once).
      if (waits.get(e.worker) === e.name) waits.delete(e.worker);
      holder.set(e.name as string, e.worker);
    } else if (e.ev === "exit" && holder.get(e.name as string) === e.worker) holder.delete(e.name as string);
    const present = new Set(cyclesOf(waits, holder).keys());
    for (const key of [...since.keys()]) if (!present.has(key)) closeCycle(key, at);
    for (const key of present)
      if (!since.has(key)) {
        since.set(key, at);
        report.cycles++;
      }
  }
  const last = BigInt(sorted.at(-1)?.at ?? "0");
  for (const key of [...since.keys()]) closeCycle(key, last);
  return report;
}

/** Every wait-for cycle, keyed by its edges "worker>name" sorted (one key per cycle, wherever it starts). */
function cyclesOf(waits: Map<string, string>, holder: Map<string, string>): Map<string, string[]> {
  const cycles = new Map<string, string[]>();
  for (const start of waits.keys()) {
    const path: string[] = [];
    let at: string | undefined = start;
    while (at !== undefined && !path.includes(at)) {
      path.push(at);
      const name = waits.get(at);
      at = name === undefined ? undefined : holder.get(name);
    }
    if (at !== start) continue;
    const edges = path.map((w) => `${w}>${waits.get(w)}`);
    cycles.set([...edges].sort().join(" "), edges);
  }
  return cycles;
}

/** A DEADLOCK answer must name a cycle present in the logs just before it, with its own wait in it. */
function checkAnswer(e: ManyLocksEvent, cycles: Map<string, string[]>): void {
  const named = (e.cycle ?? []).map((s) => `${s.owner}>${s.name}`);
  const key = [...named].sort().join(" ");
  if (named.length < 2 || !cycles.has(key))
    throw new Error(
      `${e.worker} (${e.id}) got DEADLOCK naming ${JSON.stringify(named)}, not a cycle in the logs then (cycles: ${JSON.stringify([...cycles.keys()])})`,
    );
  if (!named.includes(`${e.worker}>${e.name}`))
    throw new Error(`${e.worker} (${e.id}) got DEADLOCK for a cycle it does not wait in: ${key}`);
}
