import type { Sample, Scrape } from "./prometheus-scrape.js";

/**
 * A tiny evaluator of the PromQL subset that deploy/prometheus/alerts.yml uses, over two real
 * scrapes (`before`, `after`) instead of a time series database:
 *
 *   selector      name{l="v", l!="v"}        instant: the samples of `after`
 *   range         increase(sel[d]), rate(sel[d])
 *                 over the two scrapes (d is not checked): after − before, a drop read as a counter
 *                 reset (then after); rate divides by the seconds between them; a series missing
 *                 from `before` has no result (Prometheus needs two samples in the window too)
 *   aggregation   sum|max|min [by (l, …)] (expr)
 *   comparison    expr > N, >=, <, <=, ==, != N   (a filter: the samples for which it holds)
 *
 * An alert fires when its expression returns at least one sample. `for:` is not modelled.
 */
export function evaluate(expr: string, before: Scrape, after: Scrape): Sample[] {
  const parser = new Parser(expr, before, after);
  const result = parser.comparison();
  parser.end();
  return result;
}

const OPS: Record<string, (a: number, b: number) => boolean> = {
  ">=": (a, b) => a >= b,
  "<=": (a, b) => a <= b,
  "==": (a, b) => a === b,
  "!=": (a, b) => a !== b,
  ">": (a, b) => a > b,
  "<": (a, b) => a < b,
};
const AGGREGATIONS: Record<string, (values: number[]) => number> = {
  sum: (v) => v.reduce((a, b) => a + b, 0),
  max: (v) => Math.max(...v),
  min: (v) => Math.min(...v),
};

class Parser {
  private at = 0;

  constructor(
    private readonly text: string,
    private readonly before: Scrape,
    private readonly after: Scrape,
  ) {}

  comparison(): Sample[] {
    const left = this.term();
    const op = Object.keys(OPS).find((o) => this.peek(o));
    if (!op) return left;
    this.take(op);
    const bound = Number(this.match(/^-?\d+(\.\d+)?/));
    return left.filter((s) => OPS[op](s.value, bound));
  }

  end(): void {
    this.skip();
    if (this.at !== this.text.length) this.fail("end of expression");
  }

  private term(): Sample[] {
    const word = this.match(/^[a-zA-Z_:][a-zA-Z0-9_:]*/);
    if (word in AGGREGATIONS) return this.aggregate(AGGREGATIONS[word]);
    if (word === "increase" || word === "rate") return this.range(word);
    return this.select(word, this.after);
  }

  private aggregate(fold: (values: number[]) => number): Sample[] {
    let by: string[] = [];
    if (this.peek("by")) {
      this.take("by");
      this.take("(");
      by = this.match(/^[a-zA-Z0-9_,\s]*/)
        .split(",")
        .map((l) => l.trim())
        .filter(Boolean);
      this.take(")");
    }
    this.take("(");
    const inner = this.comparison();
    this.take(")");
    const groups = new Map<string, { labels: Record<string, string>; values: number[] }>();
    for (const s of inner) {
      const labels = Object.fromEntries(by.map((l) => [l, s.labels[l] ?? ""]));
      const key = JSON.stringify(labels);
      const group = groups.get(key) ?? { labels, values: [] };
      group.values.push(s.value);
      groups.set(key, group);
    }
    return [...groups.values()].map((g) => ({ name: "", labels: g.labels, value: fold(g.values) }));
  }

  private range(fn: "increase" | "rate"): Sample[] {
    this.take("(");
    const name = this.match(/^[a-zA-Z_:][a-zA-Z0-9_:]*/);
    const then = this.select(name, this.before, false);
    const now = this.select(name, this.after);
    this.take("[");
    this.match(/^\d+[smhd]/);
    this.take("]");
    this.take(")");
    const seconds = (this.after.atMs - this.before.atMs) / 1000;
    return now.flatMap((s) => {
      const old = then.find((o) => sameLabels(o.labels, s.labels));
      if (!old) return [];
      const increase = s.value >= old.value ? s.value - old.value : s.value;
      return [{ name: "", labels: s.labels, value: fn === "rate" ? increase / seconds : increase }];
    });
  }

  /** `name{matchers}` against `scrape`; `consume` false re-reads the same matchers for a second scrape. */
  private select(name: string, scrape: Scrape, consume = true): Sample[] {
    const start = this.at;
    const matchers: { label: string; op: string; value: string }[] = [];
    if (this.peek("{")) {
      this.take("{");
      while (!this.peek("}")) {
        const label = this.match(/^[a-zA-Z_][a-zA-Z0-9_]*/);
        const op = this.match(/^!?=/);
        const value = JSON.parse(this.match(/^"(?:[^"\\]|\\.)*"/)) as string;
        matchers.push({ label, op, value });
        if (this.peek(",")) this.take(",");
      }
      this.take("}");
    }
    if (!consume) this.at = start;
    return scrape.samples.filter(
      (s) => s.name === name && matchers.every((m) => (s.labels[m.label] === m.value) === (m.op === "=")),
    );
  }

  private skip(): void {
    while (/\s/.test(this.text[this.at] ?? "")) this.at++;
  }

  private peek(token: string): boolean {
    this.skip();
    return this.text.startsWith(token, this.at);
  }

  private take(token: string): void {
    if (!this.peek(token)) this.fail(`"${token}"`);
    this.at += token.length;
  }

  private match(pattern: RegExp): string {
    this.skip();
    const found = pattern.exec(this.text.slice(this.at));
    if (!found) this.fail(String(pattern));
    this.at += found[0].length;
    return found[0];
  }

  private fail(expected: string): never {
    throw new Error(`PromQL subset: expected ${expected} at ${this.at} in ${this.text}`);
  }
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
