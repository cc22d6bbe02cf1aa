import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LockImpl } from "../impls/lock-impl.js";
import { barChart, type CdfSeries, cdfChart, PALETTE } from "../plot/charts.js";
import type { Rgb } from "../plot/png-canvas.js";
import type { BenchResults } from "../run-plan.js";
import { cdfPoints } from "../stats.js";

/** One written plot: its file name under bench/results/ and what it shows. */
export interface Plot {
  file: string;
  caption: string;
}

// One color per implementation whatever --only selects, so plots of different runs compare; the
// embedded-store Turnstile is cyan beside Turnstile's blue, the same family but told apart.
const IMPL_COLOR: Record<string, Rgb> = {
  turnstile: PALETTE[0],
  "turnstile-embedded": PALETTE[9],
  "turnstile-mtls": PALETTE[8],
  "turnstile-fencing": PALETTE[7],
  spin: PALETTE[1],
  "redis-semaphore": PALETTE[2],
  redlock: PALETTE[3],
  etcd: PALETTE[4],
};

/** The plot color of an implementation: its own, or for an unknown id one by its place in `impls`. */
export function implColor(id: string, impls: LockImpl[]): Rgb {
  const place = impls.findIndex((i) => i.id === id);
  return IMPL_COLOR[id] ?? PALETTE[(5 + Math.max(0, place)) % PALETTE.length];
}

/**
 * Writes the PNG plots of a run into `dir`: the hand-off gap CDF per contender count, hand-off and
 * spread throughput bars, the spread acquire-latency CDF and the fleet's keepalive round trips.
 */
export function writePlots(results: BenchResults, impls: LockImpl[], dir: string): Plot[] {
  const color = (id: string) => implColor(id, impls);
  const label = (id: string) => impls.find((i) => i.id === id)?.label ?? id;
  const plots: Plot[] = [];
  const write = (file: string, caption: string, png: Buffer) => {
    writeFileSync(join(dir, file), png);
    plots.push({ file, caption });
  };
  for (const { contenders, discipline, results: rs } of results.handOff) {
    const series: CdfSeries[] = rs.map((r) => ({
      label: label(r.impl),
      color: color(r.impl),
      points: cdfPoints(r.gapsMs),
    }));
    const title = `Hand-off gap, ${contenders} contenders on one lock, ${discipline}`;
    const png = cdfChart(title, "release start -> next holder has the lock (log scale)", "share of hand-offs", series);
    write(`handoff-gap-cdf-${contenders}-${discipline}.png`, `${title}: cumulative share of hand-offs by gap`, png);
  }
  if (results.handOff.length) {
    const groups = results.handOff.map((h) => `${h.contenders}, ${h.discipline}`);
    const series = impls.map((impl) => ({
      label: impl.label,
      color: color(impl.id),
      values: results.handOff.map((h) => h.results.find((r) => r.impl === impl.id)?.handOffsPerS ?? Number.NaN),
    }));
    write(
      "handoff-throughput.png",
      "Hand-offs per second",
      barChart("Hand-offs per second", "hand-offs/s", groups, series),
    );
  }
  if (results.spread.length) {
    const groups = results.spread.map((s) => `${s.workers} workers`);
    const series = impls.map((impl) => ({
      label: impl.label,
      color: color(impl.id),
      values: results.spread.map((s) => s.results.find((r) => r.impl === impl.id)?.cyclesPerS ?? Number.NaN),
    }));
    const title = "Spread: lock cycles per second, distinct locks";
    write("spread-throughput.png", title, barChart(title, "cycles/s", groups, series));
    const first = results.spread[0];
    const cdf = first.results.map((r) => ({
      label: label(r.impl),
      color: color(r.impl),
      points: cdfPoints(r.acquireMs),
    }));
    const cdfTitle = `Spread: acquire latency, ${first.workers} workers`;
    write(
      `spread-acquire-cdf-${first.workers}.png`,
      cdfTitle,
      cdfChart(cdfTitle, "acquire call -> lock held (log scale)", "share of acquires", cdf),
    );
  }
  if (results.fleet?.rttMs.length) {
    const f = results.fleet;
    const title = `Idle fleet: keepalive round trip, ${f.sessions} sessions x ${f.locks / f.sessions} locks`;
    const series = [{ label: "Turnstile", color: color("turnstile"), points: cdfPoints(f.rttMs) }];
    write(
      "fleet-keepalive-rtt-cdf.png",
      title,
      cdfChart(title, "keepalive sent -> ack (log scale)", "share of keepalives", series),
    );
  }
  return plots;
}
