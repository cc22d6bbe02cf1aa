/** One sample of a scrape: metric name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** One scrape of a `/metrics` endpoint: when it was taken (ms, Date.now()), its samples and declared types. */
export interface Scrape {
  atMs: number;
  samples: Sample[];
  /** Each metric family's `# TYPE` (counter, gauge, histogram, summary), samples or not. */
  types: Map<string, string>;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;

/** Parses the Prometheus text exposition format (comments skipped, label values unescaped). */
export function parseExposition(text: string, atMs = Date.now()): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1], type[2]);
    if (line === "" || line.startsWith("#")) continue;
    const match = LINE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, raw] of (match[2] ?? "").matchAll(LABEL)) {
      labels[name] = raw.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return { atMs, samples, types };
}

/** GETs `url` (a /metrics endpoint) and parses it; fails on any status but 200. */
export async function scrapeMetrics(url: string): Promise<Scrape> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`scrape ${url}: HTTP ${response.status}`);
  return parseExposition(await response.text());
}

/**
 * Scrapes `url` as Prometheus scrapes a target: its samples plus the `up` series Prometheus adds to
 * every target (1 when the scrape succeeded, 0 when it failed: then `up` is the only sample), labelled
 * with the scrape job's name and the target's address.
 */
export async function scrapeTarget(url: string, job = "turnstile"): Promise<Scrape> {
  const labels = { job, instance: new URL(url).host };
  let scraped: Scrape;
  try {
    scraped = await scrapeMetrics(url);
  } catch {
    return { atMs: Date.now(), samples: [{ name: "up", labels, value: 0 }], types: new Map() };
  }
  scraped.samples.push({ name: "up", labels, value: 1 });
  return scraped;
}

const SUFFIXES: Record<string, string[]> = {
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"],
};

/**
 * The series names a scrape declares, whether or not a labelled family has samples yet: each
 * `# TYPE` family (a histogram as its `_bucket`, `_sum` and `_count` series) and every sample's name.
 */
export function metricNames(scrape: Scrape): Set<string> {
  const names = new Set(scrape.samples.map((s) => s.name));
  for (const [family, type] of scrape.types) for (const suffix of SUFFIXES[type] ?? [""]) names.add(family + suffix);
  return names;
}
