/** A markdown table from a header row and body rows. */
export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** Milliseconds with three significant decimals below 10 ms. */
export function ms(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return "–";
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(3);
}

/** A rate or count with thousands separators. */
export function count(v: number | undefined, digits = 0): string {
  if (v === undefined || !Number.isFinite(v)) return "–";
  return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A ratio such as 1.85×. */
export function ratio(v: number | undefined): string {
  return v === undefined || !Number.isFinite(v) ? "–" : `${v.toFixed(2)}×`;
}

/** A share as a percentage. */
export function pct(v: number | undefined, digits = 1): string {
  return v === undefined || !Number.isFinite(v) ? "–" : `${(v * 100).toFixed(digits)}%`;
}

/** Bytes as MiB. */
export function mib(v: number | undefined): string {
  return v === undefined || !Number.isFinite(v) ? "–" : `${(v / 2 ** 20).toFixed(0)} MiB`;
}

/** Microseconds per unit from seconds over a count. */
export function usPer(seconds: number | undefined, n: number): string {
  return seconds === undefined || !n ? "–" : count((seconds * 1e6) / n);
}

/** Met / missed for a target check. */
export function verdict(ok: boolean | undefined): string {
  return ok === undefined ? "not measured" : ok ? "**met**" : "**missed**";
}
