import { expect } from "chai";
import { parseExposition } from "./prometheus-scrape.js";
import { evaluate } from "./promql-subset.js";

const before = parseExposition(
  [
    "# TYPE t_failed_total counter",
    't_failed_total{reason="timeout"} 2',
    't_failed_total{reason="busy"} 0',
    "t_up 1",
  ].join("\n"),
  1_000,
);
const after = parseExposition(
  [
    't_failed_total{reason="timeout"} 9',
    't_failed_total{reason="busy"} 0',
    't_failed_total{reason="denied"} 4',
    "t_resets_total 1",
    "t_up 0",
  ].join("\n"),
  11_000,
);
const values = (expr: string) => evaluate(expr, before, after).map((s) => s.value);

describe("PromQL subset evaluator (the alerts' test oracle)", () => {
  it("reads instant selectors from the later scrape, with = and != matchers and comparisons as filters", () => {
    expect(values("t_up == 0")).to.deep.equal([0]);
    expect(values("t_up > 0")).to.deep.equal([]);
    expect(values('t_failed_total{reason!="timeout", reason!="busy"}')).to.deep.equal([4]);
  });

  it("takes increase and rate over the two scrapes; a series missing from the first has none", () => {
    expect(values('increase(t_failed_total{reason="timeout"}[5m])')).to.deep.equal([7]);
    expect(values('rate(t_failed_total{reason="timeout"}[5m])')).to.deep.equal([0.7]);
    expect(values('increase(t_failed_total{reason="denied"}[5m])')).to.deep.equal([]);
    const reset = parseExposition('t_failed_total{reason="timeout"} 1', 12_000);
    expect(evaluate('increase(t_failed_total{reason="timeout"}[5m]) > 0', after, reset)[0].value).to.equal(1);
  });

  it("aggregates with sum, max and min, optionally by labels", () => {
    expect(values("sum(increase(t_failed_total[5m])) > 5")).to.deep.equal([7]);
    expect(values("sum(increase(t_failed_total[5m])) > 7")).to.deep.equal([]);
    expect(evaluate("sum by (reason) (t_failed_total)", before, after).map((s) => s.labels.reason)).to.deep.equal([
      "timeout",
      "busy",
      "denied",
    ]);
    expect(values("max(t_failed_total)")).to.deep.equal([9]);
    expect(values("min(t_failed_total)")).to.deep.equal([0]);
  });

  it("refuses what it does not understand instead of guessing", () => {
    expect(() => evaluate("t_up and t_up", before, after)).to.throw(/expected end of expression/);
    expect(() => evaluate('t_failed_total{reason=~"t.*"}', before, after)).to.throw(/PromQL subset: expected/);
  });
});
