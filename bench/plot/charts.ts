import { PngCanvas, type Rgb } from "./png-canvas.js";

/** One line of a CDF chart. */
export interface CdfSeries {
  label: string;
  color: Rgb;
  /** Ascending x (ms) with cumulative share y in 0..1. */
  points: { x: number; y: number }[];
}

/** One implementation's bars across the groups of a bar chart. */
export interface BarSeries {
  label: string;
  color: Rgb;
  values: number[];
}

const W = 1100;
const H = 560;
// The right margin holds the legend: room for a 26-character label ("Turnstile (embedded store)").
const M = { left: 90, right: 380, top: 60, bottom: 70 };
const INK: Rgb = [30, 30, 30];
const GRID: Rgb = [225, 225, 225];

/** Distinct colors for up to ten series (blue, red, green, orange, purple, brown, pink, grey, olive, cyan). */
export const PALETTE: Rgb[] = [
  [31, 119, 180],
  [214, 39, 40],
  [44, 160, 44],
  [255, 127, 14],
  [148, 103, 189],
  [140, 86, 75],
  [227, 119, 194],
  [127, 127, 127],
  [188, 189, 34],
  [23, 190, 207],
];

/** A CDF plot with a log-scaled x axis in milliseconds, one line per series, legend on the right. */
export function cdfChart(title: string, xLabel: string, yLabel: string, series: CdfSeries[]): Buffer {
  const c = new PngCanvas(W, H);
  const xs = series.flatMap((s) => s.points.map((p) => p.x)).filter((x) => x > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.max(1e-3, Math.min(...xs, 1))));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...xs, lo * 10)));
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const px = (x: number) => M.left + ((Math.log10(Math.max(x, lo)) - Math.log10(lo)) / Math.log10(hi / lo)) * pw;
  const py = (y: number) => M.top + (1 - y) * ph;
  for (let d = lo; d <= hi * 1.0001; d *= 10) {
    c.line(px(d), M.top, px(d), M.top + ph, GRID);
    c.text(px(d), M.top + ph + 12, formatMs(d), INK, 2, "middle");
  }
  for (let y = 0; y <= 1.0001; y += 0.25) {
    c.line(M.left, py(y), M.left + pw, py(y), GRID);
    c.text(M.left - 8, py(y) - 7, y.toFixed(2), INK, 2, "end");
  }
  axes(c, pw, ph, title, xLabel, yLabel);
  series.forEach((s, i) => {
    for (let k = 1; k < s.points.length; k++) {
      const a = s.points[k - 1];
      const b = s.points[k];
      c.line(px(a.x), py(a.y), px(b.x), py(a.y), s.color, 2);
      c.line(px(b.x), py(a.y), px(b.x), py(b.y), s.color, 2);
    }
    legend(c, i, s.label, s.color);
  });
  return c.toPng();
}

/** Grouped bars (one group per entry of `groups`, one bar per series), linear y from zero. */
export function barChart(title: string, yLabel: string, groups: string[], series: BarSeries[]): Buffer {
  const c = new PngCanvas(W, H);
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const max = niceCeil(Math.max(1, ...series.flatMap((s) => s.values.filter(Number.isFinite))));
  const py = (v: number) => M.top + (1 - v / max) * ph;
  for (let k = 0; k <= 5; k++) {
    const v = (max * k) / 5;
    c.line(M.left, py(v), M.left + pw, py(v), GRID);
    c.text(M.left - 8, py(v) - 7, formatCount(v), INK, 2, "end");
  }
  axes(c, pw, ph, title, "", yLabel);
  const groupW = pw / groups.length;
  const barW = Math.floor((groupW * 0.8) / series.length);
  groups.forEach((g, gi) => {
    const x0 = M.left + gi * groupW + groupW * 0.1;
    series.forEach((s, si) => {
      const v = s.values[gi];
      if (!Number.isFinite(v)) return;
      c.rect(x0 + si * barW + 1, py(v), barW - 2, M.top + ph - py(v), s.color);
    });
    c.text(M.left + gi * groupW + groupW / 2, M.top + ph + 10, g, INK, 2, "middle");
  });
  series.forEach((s, i) => {
    legend(c, i, s.label, s.color);
  });
  return c.toPng();
}

function axes(c: PngCanvas, pw: number, ph: number, title: string, xLabel: string, yLabel: string): void {
  c.line(M.left, M.top, M.left, M.top + ph, INK, 2);
  c.line(M.left, M.top + ph, M.left + pw, M.top + ph, INK, 2);
  c.text(M.left + pw / 2, 8, title, INK, 2, "middle");
  if (xLabel) c.text(M.left + pw / 2, H - 28, xLabel, INK, 2, "middle");
  c.text(12, M.top - 24, yLabel, INK, 2, "start");
}

function legend(c: PngCanvas, i: number, label: string, color: Rgb): void {
  const x = W - M.right + 20;
  const y = M.top + 10 + i * 28;
  c.rect(x, y + 3, 22, 8, color);
  c.text(x + 30, y, label, INK, 2);
}

function formatMs(ms: number): string {
  return ms >= 1 ? `${ms} ms` : `${Number(ms.toPrecision(1))} ms`;
}

function formatCount(v: number): string {
  return v >= 10_000 ? `${Math.round(v / 1000)}k` : v >= 1000 ? `${(v / 1000).toFixed(1)}k` : String(Math.round(v));
}

function niceCeil(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
