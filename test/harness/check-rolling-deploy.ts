/** One line a deploy pod printed (test/harness/deploy-pod-child.ts), its time on the shared monotonic clock. */
export interface PodEvent {
  pod: string;
  event: "campaigning" | "elected" | "ends" | "handed-over" | "stopped" | "campaign-failed";
  token?: string;
  atNs: string;
}

/** One holder change a Watch observer received, stamped on the shared monotonic clock when it arrived. */
export interface ObservedChange {
  observer: string;
  atNs: bigint;
  change: "acquired" | "released" | "expired" | "revoked" | "value" | "transferred";
  token: bigint;
  holdersLeft: number;
}

/** What the rolling-deploy checker found: the measures, and every violation (empty: the run was safe). */
export interface DeployReport {
  /** Leaders elected after the first one. */
  changes: number;
  /** `changes` per replaced pod. */
  changesPerReplacement: number;
  /**
   * Hand-over latency by the pods' own logs, in ms: from one leader stopping to act (before it sends its
   * transfer or release) to the next one learning it is elected (its grant arrived, in another process);
   * the median and the longest. Scheduling of four processes on a shared machine is most of it.
   */
  medianHandOverMs: number;
  longestHandOverMs: number;
  /**
   * The longest leaderless gap, in ms: the longest time an observer saw no holder (from a change that left
   * 0 holders to the next one that left 1), after the first leader.
   */
  longestObservedGapMs: number;
  /** Hand-overs made (a pod's transfer answered). */
  transfers: number;
  violations: string[];
}

/**
 * Checks a rolling deploy's logs: never two leaders (by the pods' own leadership intervals, by fencing
 * token, by the observers' holder counts), every leader's token above the one before and every
 * transfer's successor token above the token handed over, and, with `maxGapMs`, no leaderless gap (an
 * observer seeing no holder, after the first leader) longer than that.
 */
export function checkRollingDeploy(
  pods: readonly PodEvent[],
  observed: readonly ObservedChange[],
  replacements: number,
  maxGapMs?: number,
): DeployReport {
  const violations: string[] = [];
  const ns = (e: PodEvent) => BigInt(e.atNs);
  const elected = pods.filter((e) => e.event === "elected").sort((a, b) => (ns(a) < ns(b) ? -1 : 1));
  const ends = new Map(pods.filter((e) => e.event === "ends").map((e) => [`${e.pod}#${e.token}`, e]));
  const gapsNs: bigint[] = [];
  for (let i = 1; i < elected.length; i++) {
    const [before, after] = [elected[i - 1], elected[i]];
    if (BigInt(after.token ?? 0) <= BigInt(before.token ?? 0)) {
      violations.push(`leader ${after.pod} token ${after.token} is not above ${before.pod}'s ${before.token}`);
    }
    const end = ends.get(`${before.pod}#${before.token}`);
    if (!end || ns(end) > ns(after)) {
      const when = end ? `it ended ${Number(ns(end) - ns(after)) / 1e6} ms later` : "it never ended";
      violations.push(`two leaders: ${after.pod} (token ${after.token}) was elected while ${before.pod} led (${when})`);
      continue;
    }
    gapsNs.push(ns(after) - ns(end));
  }
  const tokenOf = new Map(elected.map((e) => [e.pod, BigInt(e.token ?? 0)]));
  const transfers = pods.filter((e) => e.event === "handed-over");
  for (const t of transfers) {
    const from = tokenOf.get(t.pod) ?? 0n;
    if (BigInt(t.token ?? 0) <= from)
      violations.push(`${t.pod} handed over to token ${t.token}, not above its own ${from}`);
  }
  let longestObservedNs = 0n;
  const byObserver = new Map<string, ObservedChange[]>();
  for (const c of observed) byObserver.set(c.observer, [...(byObserver.get(c.observer) ?? []), c]);
  for (const [observer, changes] of byObserver) {
    let emptySince: bigint | undefined;
    let seenLeader = false;
    for (const c of changes) {
      if (c.holdersLeft > 1) violations.push(`observer ${observer} saw ${c.holdersLeft} holders (token ${c.token})`);
      if (c.holdersLeft === 0) {
        if (seenLeader) emptySince ??= c.atNs;
      } else {
        const gap = emptySince === undefined ? 0n : c.atNs - emptySince;
        if (gap > longestObservedNs) longestObservedNs = gap;
        if (maxGapMs !== undefined && Number(gap) / 1e6 > maxGapMs) {
          violations.push(
            `observer ${observer} saw no holder for ${(Number(gap) / 1e6).toFixed(1)} ms (bound ${maxGapMs} ms)`,
          );
        }
        emptySince = undefined;
        seenLeader = true;
      }
    }
    const acquiredTokens = changes
      .filter((c) => c.change === "acquired" || c.change === "transferred")
      .map((c) => c.token);
    for (let i = 1; i < acquiredTokens.length; i++) {
      if (acquiredTokens[i] <= acquiredTokens[i - 1]) {
        violations.push(`observer ${observer} saw token ${acquiredTokens[i]} after ${acquiredTokens[i - 1]}`);
      }
    }
  }
  const changes = Math.max(0, elected.length - 1);
  return {
    changes,
    changesPerReplacement: replacements === 0 ? 0 : changes / replacements,
    medianHandOverMs:
      gapsNs.length === 0 ? 0 : Number(gapsNs.sort((a, b) => (a < b ? -1 : 1))[gapsNs.length >> 1]) / 1e6,
    longestHandOverMs: gapsNs.length === 0 ? 0 : Number(gapsNs.reduce((a, b) => (a > b ? a : b))) / 1e6,
    longestObservedGapMs: Number(longestObservedNs) / 1e6,
    transfers: transfers.length,
    violations,
  };
}
