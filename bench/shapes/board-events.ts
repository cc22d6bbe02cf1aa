/** One event of a cross-process hand-off run, on the machine's monotonic clock (ns). */
export interface BoardEvent {
  kind: "issued" | "enter" | "release";
  who: number;
  t: number;
}

/** What the events of a window say: gaps, hand-offs per contender, hand-offs to a waiter, overlaps. */
export interface BoardStats {
  gapsMs: number[];
  counts: number[];
  toWaiter: number;
  /** Entries while another contender still held the lock (by the processes' own timestamps). */
  violations: number;
}

/**
 * Reads a hand-off run from its events, sorted by time: each entry inside [fromT, toT] that follows
 * a release inside the window is a hand-off, its gap the time from that release's start to the entry.
 * An entry before the holder's release started is an exclusion violation.
 */
export function boardStats(events: readonly BoardEvent[], contenders: number, fromT: number, toT: number): BoardStats {
  const sorted = [...events].sort((a, b) => a.t - b.t);
  const counts = new Array<number>(contenders).fill(0);
  const lastIssued = new Array<number>(contenders).fill(Number.NEGATIVE_INFINITY);
  const gapsMs: number[] = [];
  let holder: number | undefined;
  let lastRelease: number | undefined;
  let toWaiter = 0;
  let violations = 0;
  for (const e of sorted) {
    if (e.kind === "issued") lastIssued[e.who] = e.t;
    else if (e.kind === "release") {
      if (holder === e.who) holder = undefined;
      lastRelease = e.t;
    } else {
      if (holder !== undefined) violations++;
      holder = e.who;
      if (e.t >= fromT && e.t <= toT && lastRelease !== undefined && lastRelease >= fromT) {
        gapsMs.push((e.t - lastRelease) / 1e6);
        counts[e.who]++;
        if (lastIssued[e.who] < lastRelease) toWaiter++;
      }
    }
  }
  return { gapsMs, counts, toWaiter, violations };
}
