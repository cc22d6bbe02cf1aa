// The duration text both the coordinator's settings and the CLI's flags read ("250ms", "15s", "1h").
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses "250ms", "15s", "1.5m", "1h", "30d" or "0" into whole milliseconds; undefined if it is none of these. */
export function parseDurationText(text: string): number | undefined {
  if (text.trim() === "0") return 0;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(text);
  return match ? Math.round(Number(match[1]) * UNIT_MS[match[2]]) : undefined;
}

/** Formats milliseconds with the largest unit that divides them ("30d", "15s", "250ms"). */
export function formatDurationText(ms: number): string {
  for (const unit of ["d", "h", "m", "s"])
    if (ms !== 0 && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${ms}ms`;
}
