import { expect } from "chai";
import { checkRollingDeploy, type ObservedChange, type PodEvent } from "./harness/check-rolling-deploy.js";

const MS = 1_000_000;
/** A pod event at `ms` on the shared clock. */
const pod = (name: string, event: PodEvent["event"], token: number, ms: number): PodEvent => ({
  pod: name,
  event,
  token: String(token),
  atNs: String(ms * MS),
});
const seen = (change: ObservedChange["change"], token: number, holdersLeft: number, ms: number): ObservedChange => ({
  observer: "on-0",
  atNs: BigInt(ms * MS),
  change,
  token: BigInt(token),
  holdersLeft,
});

// The rolling-deploy test (test/client/rolling-deploy.test.ts) trusts this checker; these cases show it catches what it must.
describe("checkRollingDeploy()", () => {
  const handOver = [
    pod("a", "elected", 1, 0),
    pod("a", "ends", 1, 100),
    pod("a", "handed-over", 2, 103),
    pod("b", "elected", 2, 104),
  ];

  it("accepts a clean hand-over and measures it: one change, one transfer, no leaderless time", () => {
    const report = checkRollingDeploy(handOver, [seen("acquired", 1, 1, 1), seen("transferred", 2, 1, 102)], 1, 50);
    expect(report).to.deep.include({ changes: 1, changesPerReplacement: 1, transfers: 1, violations: [] });
    expect([report.medianHandOverMs, report.longestHandOverMs, report.longestObservedGapMs]).to.deep.equal([4, 4, 0]);
  });

  it("reports two leaders when the next was elected before the last one stopped, or one never stopped", () => {
    const overlap = checkRollingDeploy(
      [pod("a", "elected", 1, 0), pod("b", "elected", 2, 5), pod("a", "ends", 1, 9)],
      [],
      1,
    );
    expect(overlap.violations).to.deep.equal([
      "two leaders: b (token 2) was elected while a led (it ended 4 ms later)",
    ]);
    const never = checkRollingDeploy([pod("a", "elected", 1, 0), pod("b", "elected", 2, 5)], [], 1);
    expect(never.violations).to.deep.equal(["two leaders: b (token 2) was elected while a led (it never ended)"]);
  });

  it("reports tokens that do not rise: a later leader's, a transfer's, an observer's", () => {
    const events = [
      pod("a", "elected", 5, 0),
      pod("a", "ends", 5, 1),
      pod("a", "handed-over", 4, 2),
      pod("b", "elected", 4, 3),
    ];
    const report = checkRollingDeploy(events, [seen("acquired", 5, 1, 0), seen("transferred", 4, 1, 2)], 1);
    expect(report.violations).to.deep.equal([
      "leader b token 4 is not above a's 5",
      "a handed over to token 4, not above its own 5",
      "observer on-0 saw token 4 after 5",
    ]);
  });

  it("reports an observer seeing two holders, and a leaderless gap over the bound (only after the first leader)", () => {
    const changes = [
      seen("released", 0, 0, 0),
      seen("acquired", 1, 1, 10),
      seen("acquired", 2, 2, 11),
      seen("released", 1, 0, 20),
      seen("acquired", 3, 1, 95),
    ];
    const report = checkRollingDeploy([], changes, 1, 50);
    expect(report.violations).to.deep.equal([
      "observer on-0 saw 2 holders (token 2)",
      "observer on-0 saw no holder for 75.0 ms (bound 50 ms)",
    ]);
    expect(report.longestObservedGapMs).to.equal(75);
    expect(checkRollingDeploy([], changes, 1).violations).to.deep.equal(["observer on-0 saw 2 holders (token 2)"]);
  });
});
