import { expect } from "chai";
import type { AnatomyResult, ChainSummary } from "../../bench/anatomy/run-anatomy.js";
import {
  anatomySection,
  atOnceExtra,
  heldByText,
  legsAboveFloor,
  worstHandOff,
} from "../../bench/report/anatomy-section.js";
import { limitsSection } from "../../bench/report/limits-section.js";
import { targetRows, targetTable } from "../../bench/report/targets.js";
import { counters, handOff, latency, onRedis, spread } from "./bench-result-fixtures.js";

/** A chain whose eleven legs have the given medians (ms), p99 = 4 × the median. */
function chain(p50s: number[]): ChainSummary {
  const legs = p50s.map((p50, i) => ({ leg: `leg ${i}`, summary: latency(p50, p50, 4 * p50) }));
  const total = p50s.reduce((a, b) => a + b, 0);
  return { legs, total: latency(total, total, 4 * total), followed: 100, unmatched: 0 };
}

const floorEcho = {
  toServer: latency(0.05, 0.05, 0.2),
  script: latency(0.06, 0.06, 0.2),
  toClient: latency(0.05, 0.05, 0.2),
  roundTrip: latency(0.2, 0.2, 0.6),
  cpuUs: { server: 150, client: 90 },
};
const anatomy = {
  contenders: 8,
  handOffs: [
    // released at once: the flush leg (6) holds the most above its floor (none): 0.3 ms
    {
      discipline: "at-once",
      chain: chain([0.02, 0.1, 0.01, 0.005, 0.005, 0.01, 0.3, 0.08, 0.03, 0.07, 0.02]),
      run: onRedis,
    },
    // after a turn: 0.2 ms less on the flush leg, 0.01 ms less on the grant's leg (8)
    {
      discipline: "after-turn",
      chain: chain([0.02, 0.1, 0.01, 0.005, 0.005, 0.01, 0.1, 0.08, 0.02, 0.07, 0.02]),
      run: onRedis,
    },
  ],
  uncontended: chain([0.02, 0.25, 0.01, 0.005, 0.005, 0.01, 0.05, 0.05, 0.03, 0.06, 0.02]),
  floors: {
    grpcEcho: floorEcho,
    evalsha: latency(0.05, 0.05, 0.2),
    evalshaCpuUs: 80,
    grpcEchoEval: floorEcho,
    busyEchoEvalCpuUs: { server: 40, client: 20 },
  },
} as unknown as AnatomyResult;

describe("bench targets and the anatomy's pointers", () => {
  it("orders the legs by how far they sit above their floor", () => {
    const legs = legsAboveFloor(anatomy, "p50Ms");
    expect(legs[0].leg).to.match(/Redis socket written/);
    expect(legs[0].us).to.be.closeTo(300, 1e-6);
    expect(legs[1].leg).to.match(/coordinator starts decoding it/);
    expect(legs[1].floorUs).to.be.closeTo(50, 1e-6);
  });

  it("points a missed target at the leg that holds it, and a met one at nothing", () => {
    expect(heldByText(anatomy, "p50Ms")).to.match(
      /^anatomy: \*script handed over → Redis socket written \(uncorked at the end of its tick\)\*, 300 µs median/,
    );
    const results = {
      handOff: [
        {
          contenders: 8,
          discipline: "after-turn" as const,
          results: [
            onRedis,
            handOff("spin", latency(1, 1, 2), 1000, counters(undefined, 0.1, 0.1)),
            handOff("turnstile-replicated", latency(0.7, 0.8, 3), 1000, counters(0.2, 0.3)),
          ],
        },
      ],
      spread: [
        {
          workers: 16,
          results: [
            spread("turnstile", 2000, counters(0.5, 0.2, 0.1)),
            spread("spin", 10000, counters(undefined, 0.1)),
            spread("turnstile-replicated", 1800, counters(0.5, 0.2)),
          ],
        },
      ],
      anatomy,
    };
    const rows = targetRows(results);
    // After a turn: 0.5 ms mean against the echo + EVALSHA floor's 0.2 ms mean, above 1.3×.
    const gap = rows.find((r) => r.target.includes("gap mean"));
    expect(gap?.target).to.equal(
      "hand-off, 8 contenders, released after one turn: gap mean ≤ 1.3× the echo + EVALSHA floor",
    );
    expect(gap?.measured).to.equal("0.500 ms = 2.50× the floor (0.200 ms)");
    expect(gap?.met).to.equal(false);
    expect(gap?.heldBy).to.match(/socket written/);
    const p99 = rows.find((r) => r.target.includes("gap p99"));
    expect(p99?.met).to.equal(false);
    expect(p99?.heldBy).to.match(/; floor: the same trip through the minimal echo server has a p99 of 600 µs here$/);
    const coordinatorCpu = rows.find((r) => r.target.includes("coordinator CPU ≤ 250 µs per hand-off"));
    expect(coordinatorCpu?.heldBy).to.match(
      /floor: two echo \+ EVALSHA trips cost the echo server 80 µs of CPU with 8 streams in flight and 300 µs one at a time/,
    );
    const vsSpin = rows.find((r) => r.target.includes("1.8× the spin lock"));
    expect(vsSpin?.met).to.equal(true);
    expect(rows.find((r) => r.target.includes("Redisson RFairLock"))?.measured).to.equal(
      "Redisson not run after a turn",
    );
    expect(rows.find((r) => r.target.includes("Redisson RFairLock"))?.met).to.equal(undefined);
    const spreadRow = rows.find((r) => r.target.includes("0.5× the spin lock"));
    expect(spreadRow?.met).to.equal(false);
    expect(spreadRow?.heldBy).to.match(/coordinator starts decoding it/);
    // 2,000 cycles in 1 s: coordinator 0.5 s, clients 0.2 s, Redis 0.1 s; the spin lock's clients 0.1 s of 10,000.
    expect(spreadRow?.heldBy).to.match(
      /^CPU: a cycle costs 400 µs summed over the coordinator \(250\), the clients \(100\) and Redis \(50\), against the spin lock's 10 µs \(clients, Redis\)/,
    );
    const acked = rows.find((r) => r.target.startsWith("majority-acked row"));
    expect(acked?.met).to.equal(false);
    expect(acked?.heldBy).to.match(
      /^the WAIT on each hand-off's serial path .*: gap mean 0\.50+ → 0\.80+ ms after a turn;/,
    );
    const table = targetTable(rows);
    expect(table).to.include(
      "| hand-off, 8 contenders: hand-offs/s ≥ 1.8× the spin lock (both disciplines) | 2.00× (2,000 vs 1,000) after a turn | **met** |  |",
    );
  });

  it("judges a hand-off target on the worse discipline and lists both", () => {
    const atOnce = (impl: string, gap: number, perS: number) =>
      handOff(impl, latency(gap, gap, 1), perS, counters(perS * 200e-6, 0.1, 0.1), "at-once");
    const afterTurn = (impl: string, gap: number, perS: number) =>
      handOff(impl, latency(gap, gap, 1), perS, counters(perS * 100e-6, 0.1, 0.1), "after-turn");
    const results = {
      handOff: [
        // At once the spin lock keeps up (1.25×) and the coordinator spends 300 µs per hand-off;
        // after a turn Turnstile is 3× the spin lock and spends 150 µs: the targets are missed.
        {
          contenders: 8,
          discipline: "at-once" as const,
          results: [atOnce("turnstile", 0.29, 1000), atOnce("spin", 0.5, 800), atOnce("redisson-fair", 0.6, 600)],
        },
        {
          contenders: 8,
          discipline: "after-turn" as const,
          results: [afterTurn("turnstile", 0.25, 1500), afterTurn("spin", 1.2, 500)],
        },
      ],
      spread: [],
      anatomy,
    };
    const rows = targetRows(results);
    const vsSpin = rows.find((r) => r.target.includes("1.8× the spin lock"));
    expect(vsSpin?.measured).to.equal("1.25× (1,000 vs 800) at once; 3.00× (1,500 vs 500) after a turn");
    expect(vsSpin?.met).to.equal(false);
    // Redisson ran at once only: judged on that one (1.67× ≥ 1.5×); after a turn it reads "not run".
    const vsFair = rows.find((r) => r.target.includes("RFairLock"));
    expect(vsFair?.measured).to.equal("1.67× (1,000 vs 600) at once; Redisson not run after a turn");
    expect(vsFair?.met).to.equal(true);
    const cpu = rows.find((r) => r.target.includes("coordinator CPU ≤ 250 µs per hand-off"));
    expect(cpu?.measured).to.equal("200 µs at once; 100 µs after a turn");
    expect(cpu?.met).to.equal(true);
    // Each discipline's gap has its own bound on the floor (0.2 ms mean): 1.5× at once, 1.3× after a turn.
    const gaps = rows.filter((r) => r.target.includes("gap mean"));
    expect(gaps.map((r) => [r.target.match(/≤ [\d.]+×/)?.[0], r.met])).to.deep.equal([
      ["≤ 1.5×", true],
      ["≤ 1.3×", true],
    ]);
    // The at-once gap's pointer is its own chain's leg (300 µs on the flush), the after-turn one's its own (100 µs).
    expect(gaps[0].heldBy).to.match(/, 300 µs median/);
    expect(gaps[1].heldBy).to.match(/, 100 µs median/);
  });

  it("judges the floor lock by each target's own rule, beside Turnstile, when it ran", () => {
    const results = {
      handOff: [
        {
          contenders: 8,
          discipline: "after-turn" as const,
          results: [
            onRedis,
            // The floor lock: 4,000/s, a 0.2 ms gap, 100 µs of server CPU per hand-off.
            handOff("floor", latency(0.2, 0.2, 0.5), 4000, counters(0.4, 0.4, 0.2)),
            handOff("floor-queued", latency(0.25, 0.25, 0.6), 3000, counters(0.45, 0.45, 0.2)),
            handOff("spin", latency(1, 1, 2), 1000, counters(undefined, 0.1, 0.1)),
          ],
        },
      ],
      spread: [
        {
          workers: 16,
          results: [
            spread("turnstile", 2000, counters(0.5, 0.2, 0.1)),
            // 4,000 cycles/s: 0.4× the spin lock, so the floor lock itself misses the 0.5× target.
            spread("floor", 4000, counters(0.2, 0.1, 0.05)),
            spread("spin", 10000, counters(undefined, 0.1)),
          ],
        },
      ],
      anatomy,
    };
    const rows = targetRows(results);
    const gap = rows.find((r) => r.target.includes("gap mean"));
    expect(gap?.floor).to.equal("0.200 ms = 1.00× the echo floor: meets it; Turnstile's gap is 2.50× the floor lock's");
    expect(rows.find((r) => r.target.includes("1.8× the spin lock"))?.floor).to.equal(
      "4.00× (4,000 vs 1,000) after a turn: meets it",
    );
    expect(rows.find((r) => r.target.includes("0.5× the spin lock"))?.floor).to.equal(
      "0.40× (4,000 vs 10,000): misses it",
    );
    expect(rows.find((r) => r.target.includes("250 µs per hand-off"))?.floor).to.equal("100 µs after a turn: meets it");
    expect(rows.find((r) => r.target.includes("80 µs per uncontended cycle"))?.floor).to.equal("50 µs: meets it");
    // The client CPU target pairs each implementation's hand-off with its own spread row.
    expect(rows.find((r) => r.target.includes("client CPU"))?.floor).to.equal("100 µs; 25 µs after a turn: misses it");
    const table = targetTable(rows);
    expect(table.split("\n")[0]).to.equal(
      "| target | this run | | the floor lock, same run (bench/floor-lock) | held by (where missed) |",
    );
    // Without the floor lock the table keeps its four columns.
    const without = targetTable(targetRows({ ...results, handOff: [], spread: [] }));
    expect(without.split("\n")[0]).to.equal("| target | this run | | held by (where missed) |");
    const limits = limitsSection(results);
    expect(limits).to.match(
      /\*\*Against the floor lock\.\*\*[^\n]*Hand-off, 8 contenders, released after a turn: the floor lock handed off 4,000\/s with a gap mean of 200 µs, Turnstile 2,000\/s \(0\.50×\) with 500 µs; per hand-off the coordinator 100 against 100 µs of CPU/,
    );
    expect(limits).to.include(
      "Answering each waiter Queued as Turnstile does (the floor-queued row), the floor lock handed off 3,000/s with a gap mean of 250 µs, its server at 150 µs of CPU per hand-off and the clients' process at 150.",
    );
    expect(limits).to.match(/Spread, 16 workers: the floor lock ran 4,000 cycles\/s, Turnstile 2,000 \(0\.50×\)/);
  });

  it("says where the at-once discipline's extra time goes, leg by leg", () => {
    const extra = atOnceExtra(anatomy);
    expect(extra?.totalUs).to.be.closeTo(210, 1e-6);
    expect(extra?.legs[0].leg).to.match(/Redis socket written/);
    expect(extra?.legs[0].us).to.be.closeTo(200, 1e-6);
    expect(extra?.legs[1].leg).to.match(/answered → grant written/);
    expect(extra?.legs[1].us).to.be.closeTo(10, 1e-6);
    expect(worstHandOff(anatomy).discipline).to.equal("at-once");
    // The anatomy's paragraph says it in words; swapped, the at-once trip is the shorter one.
    expect(anatomySection(anatomy)).to.include("the whole trip's mean is 210 µs longer than released after a turn");
    const swapped = {
      ...anatomy,
      handOffs: anatomy.handOffs.map((h, i) => ({ ...h, chain: anatomy.handOffs[1 - i].chain })),
    };
    expect(anatomySection(swapped)).to.match(
      /the whole trip's mean is 210 µs shorter than released after a turn; the legs whose mean shrank most are \*script handed over → Redis socket written[^*]*\* \(−200 µs\)/,
    );
  });
});
