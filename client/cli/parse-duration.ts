const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a command-line duration ("500ms", "10s", "1.5m", "2h", "0") into milliseconds; undefined
 * when it is not one. The same format `turnstile serve` reads (server/config/duration-text.ts),
 * kept apart because client code never imports server code.
 */
export function parseDuration(text: string): number | undefined {
  if (text.trim() === "0") return 0;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(text);
  return match ? Math.round(Number(match[1]) * UNIT_MS[match[2]]) : undefined;
}
