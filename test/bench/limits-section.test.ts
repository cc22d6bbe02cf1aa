import { expect } from "chai";
import { limitsSection } from "../../bench/report/limits-section.js";
import type { BenchResults } from "../../bench/run-plan.js";
import { counters, embedded, latency, onRedis, spread } from "./bench-result-fixtures.js";

describe("limitsSection()", () => {
  const rt = { redisPing: latency(0.05, 0.05, 0.1), coordinatorKeepAlive: latency(0.1, 0.1, 0.2) };
  // One run's results, keeping only the implementations --only would have selected.
  const results = (impls: string[]): BenchResults => ({
    roundTrips: rt,
    handOff: [
      {
        contenders: 8,
        discipline: "after-turn" as const,
        results: [onRedis, embedded].filter((r) => impls.includes(r.impl)),
      },
    ],
    spread: [
      {
        workers: 16,
        results: [
          spread("turnstile", 1000, counters(0.5, 0.8, 0.3)),
          spread("turnstile-embedded", 2000, counters(0.6, 1.0)),
          spread("redis-semaphore", 4000, counters(undefined, 1, 0.4)),
        ].filter((r) => impls.includes(r.impl)),
      },
    ],
  });

  it("adds the embedded comparison to the hand-off and spread paragraphs when both rows ran", () => {
    const md = limitsSection(results(["turnstile", "turnstile-embedded", "redis-semaphore"]));
    expect(md).to.match(/\*\*Hand-off gap\.\*\*[^\n]*On the embedded store \(the same client/);
    expect(md).to.match(/\*\*Uncontended throughput \(spread\)\.\*\*[^\n]*That is 0\.50× redis-semaphore's cycles\/s/);
    expect(md).not.to.include("not reachable by a local fix");
  });

  it("keeps a spread comparison when redis-semaphore did not run", () => {
    const md = limitsSection(results(["turnstile", "turnstile-embedded"]));
    expect(md).to.include("**Uncontended throughput (spread), 16 workers.** On the embedded store the same cycle");
  });

  it("leaves the embedded sentences out when --only omitted that row", () => {
    const md = limitsSection(results(["turnstile", "redis-semaphore"]));
    expect(md).not.to.include("embedded store");
    expect(md).to.include("not reachable by a local fix");
  });

  it("writes no comparison when only the embedded row ran", () => {
    expect(limitsSection(results(["turnstile-embedded"]))).not.to.include("embedded store");
  });
});
