import { readFileSync } from "node:fs";
import { expect } from "chai";
import { alertRules } from "../harness/alert-rules.js";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { metricNames, type Scrape, scrapeTarget } from "../harness/prometheus-scrape.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

// Words of a PromQL expression that are not metric names: the functions and keywords the dashboard
// and the alerts use, and the labels they group or match by.
const NOT_METRICS = new Set([
  ...["sum", "max", "min", "by", "rate", "increase", "histogram_quantile"],
  ...["le", "path", "prefix", "reason", "operation", "instance", "job"],
]);

/** The metric names an expression reads: its identifiers less quoted strings, ranges, functions and labels. */
function metricsOf(expr: string): string[] {
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"/g, "").replace(/\[[^\]]*\]/g, "");
  return [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]).filter((w) => !NOT_METRICS.has(w));
}

/** The `label="value"` matchers of an expression. */
const matchersOf = (expr: string) =>
  [...expr.matchAll(/([a-z_]+)!?="([^"]*)"/g)].map(([, label, value]) => ({ label, value }));

interface Panel {
  title: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

/** Every (panel, expression) of the Grafana dashboard, rows' nested panels included. */
function dashboardQueries(): { panel: string; expr: string }[] {
  const walk = (panels: Panel[]): { panel: string; expr: string }[] =>
    panels.flatMap((p) => [
      ...(p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })),
      ...walk(p.panels ?? []),
    ]);
  return walk((JSON.parse(read("deploy/grafana/turnstile.json")) as { panels: Panel[] }).panels);
}

// The Grafana dashboard and the alert rules against what a real `turnstile serve --metrics` exposes:
// every metric they read is declared, and every label value they match on is exported.
describe("deploy/: dashboard and alert queries name real metrics", () => {
  let redis: TestRedis;
  let serve: CoordinatorProcess;
  let scrape: Scrape;

  before(async () => {
    redis = await startRedis();
    serve = await spawnCoordinator(redis.url, ["--metrics", "127.0.0.1:0"]);
    // As Prometheus sees the target: with its own `up` series, labelled job and instance.
    scrape = await scrapeTarget(serve.metricsUrl ?? "");
  });
  after(async () => {
    await serve?.kill();
    await redis?.stop();
  });

  it("reads only metrics the coordinator declares, in every dashboard panel", () => {
    const queries = dashboardQueries();
    expect(queries.length).to.be.at.least(20);
    const names = metricNames(scrape);
    const unknown = queries.flatMap((q) =>
      metricsOf(q.expr)
        .filter((m) => !names.has(m))
        .map((m) => `${q.panel}: ${m}`),
    );
    expect(unknown).to.deep.equal([]);
    const read = new Set(queries.flatMap((q) => metricsOf(q.expr)));
    for (const failure of [
      "turnstile_acquires_failed_total",
      "turnstile_holds_lost_total",
      "turnstile_revocations_total",
    ]) {
      expect(read.has(failure), `the dashboard shows ${failure}`).to.equal(true);
    }
  });

  it("alerts on declared metrics, matching label values the coordinator exports from the start", () => {
    const rules = alertRules();
    expect(rules.length).to.be.at.least(5);
    const names = metricNames(scrape);
    for (const { alert, expr } of rules) {
      expect(
        metricsOf(expr).filter((m) => !names.has(m)),
        alert,
      ).to.deep.equal([]);
      for (const { label, value } of matchersOf(expr)) {
        expect(
          scrape.samples.some((s) => s.labels[label] === value),
          `${alert}: ${label}="${value}" is exported`,
        ).to.equal(true);
      }
    }
  });
});
