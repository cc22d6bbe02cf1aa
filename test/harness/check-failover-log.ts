/** One event a failover-child reported (see failover-child.ts); `at` is process.hrtime.bigint() as text. */
export interface ChildEvent {
  worker: string;
  ev: "start" | "end" | "grant" | "write" | "refused" | "exit" | "lost" | "done";
  id?: string;
  name?: string;
  token?: string;
  outcome?: string;
  detail?: string;
  /** On "start": how long the acquire may wait. */
  waitMs?: number;
  at: string;
}

/** Optional checks of a run. */
export interface FailoverLogChecks {
  /** Fail an acquire that ended more than this many ms past its wait (`waitMs` of its start). */
  lateMs?: number;
}

/** What the log showed once every check passed. */
export interface FailoverLogReport {
  acquires: number;
  grants: number;
  /** Acquires that ended in an error (UNAVAILABLE during a failover, ...), by error name. */
  failures: Map<string, number>;
  /** Holds that ended lost rather than released. */
  lost: number;
  /** Grants per lock name. */
  grantsByName: Map<string, number>;
  /** The most any acquire ended past its wait, in ms (negative: all ended before their wait ran out). */
  mostPastWaitMs: number;
}

interface Hold {
  id: string;
  worker: string;
  token: bigint;
  from: bigint;
  to?: bigint;
}

/**
 * Checks a failover run's events: every acquire ended; per name, no fencing token was issued
 * twice; on exclusive locks tokens strictly increase in grant order and no two holds overlap (a
 * hold runs from the grant to the holder's exit or lost signal, on the shared monotonic clock); a
 * semaphore never had more holders than its limit; the token-checking resource refused no write;
 * with `checks.lateMs`, no acquire ended more than that past its wait.
 * Throws an Error naming the first violation; returns the counts otherwise.
 */
export function checkFailoverLog(
  events: ChildEvent[],
  limits: Map<string, number>,
  checks: FailoverLogChecks = {},
): FailoverLogReport {
  const report: FailoverLogReport = {
    acquires: 0,
    grants: 0,
    failures: new Map(),
    lost: 0,
    grantsByName: new Map(),
    mostPastWaitMs: Number.NEGATIVE_INFINITY,
  };
  const open = new Map<string, ChildEvent>();
  const holds = new Map<string, Hold[]>();
  const byId = new Map<string, Hold>();
  for (const e of events) {
    if (e.ev === "start") {
      report.acquires++;
      open.set(e.id as string, e);
    } else if (e.ev === "end") {
      const start = open.get(e.id as string);
      open.delete(e.id as string);
      if (start?.waitMs !== undefined) {
        const pastMs = Number((BigInt(e.at) - BigInt(start.at)) / 1_000_000n) - start.waitMs;
        report.mostPastWaitMs = Math.max(report.mostPastWaitMs, pastMs);
        if (checks.lateMs !== undefined && pastMs > checks.lateMs)
          throw new Error(
            `${e.worker}: acquire ${e.id} of ${e.name} ended ${pastMs} ms past its wait of ${start.waitMs} ms ` +
              `(at most ${checks.lateMs})`,
          );
      }
      if (e.outcome !== "granted")
        report.failures.set(e.outcome ?? "?", (report.failures.get(e.outcome ?? "?") ?? 0) + 1);
    } else if (e.ev === "grant") {
      report.grants++;
      const name = e.name as string;
      report.grantsByName.set(name, (report.grantsByName.get(name) ?? 0) + 1);
      const hold = { id: e.id as string, worker: e.worker, token: BigInt(e.token as string), from: BigInt(e.at) };
      holds.set(name, [...(holds.get(name) ?? []), hold]);
      byId.set(hold.id, hold);
    } else if (e.ev === "exit" || e.ev === "lost") {
      const hold = byId.get(e.id as string);
      if (!hold) throw new Error(`${e.worker}: ${e.ev} of ${e.id}, which was never granted`);
      hold.to = BigInt(e.at);
      if (e.ev === "lost") report.lost++;
    } else if (e.ev === "refused") {
      throw new Error(`${e.worker}: the resource refused token ${e.token} on ${e.name}: a newer token had written`);
    }
  }
  for (const e of open.values()) throw new Error(`${e.worker}: acquire ${e.id} of ${e.name} never ended`);
  for (const [name, list] of holds) {
    const seen = new Map<bigint, string>();
    for (const h of list) {
      if (h.to === undefined) throw new Error(`${h.worker}: hold ${h.id} of ${name} never ended`);
      const other = seen.get(h.token);
      if (other) throw new Error(`${name}: token ${h.token} issued twice (${other} and ${h.id})`);
      seen.set(h.token, h.id);
    }
    const sorted = [...list].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
    const limit = limits.get(name) ?? 1;
    if (limit === 1) checkExclusive(name, sorted);
    else checkLimit(name, sorted, limit);
  }
  return report;
}

function checkExclusive(name: string, sorted: Hold[]): void {
  for (let i = 1; i < sorted.length; i++) {
    const [a, b] = [sorted[i - 1], sorted[i]];
    if (b.token <= a.token)
      throw new Error(`${name}: token ${b.token} (${b.id}) granted after ${a.token} (${a.id}) is not greater`);
    if (b.from < (a.to as bigint))
      throw new Error(
        `${name}: ${b.id} (token ${b.token}) was granted ${a.to! - b.from} ns before ${a.id} (token ${a.token}) let go`,
      );
  }
}

function checkLimit(name: string, sorted: Hold[], limit: number): void {
  const edges = sorted.flatMap((h) => [
    { at: h.from, d: 1, id: h.id },
    { at: h.to as bigint, d: -1, id: h.id },
  ]);
  // At equal times, a leave counts before an enter.
  edges.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : x.d - y.d));
  let inside = 0;
  for (const e of edges) {
    inside += e.d;
    if (inside > limit) throw new Error(`${name}: ${inside} holders at once (limit ${limit}) when ${e.id} entered`);
  }
}
