import { expect } from "chai";
import { checkDeadlockLog, type ManyLocksEvent } from "./harness/check-deadlock-log.js";

const MS = 1_000_000;
/** An event at `ms` milliseconds on the shared clock. */
const at = (ms: number, e: Omit<ManyLocksEvent, "at">): ManyLocksEvent => ({ ...e, at: String(ms * MS) });

/** w0 holds a and waits for b; w1 holds b and waits for a (from 10 ms on); w1 gets DEADLOCK at `answerMs`. */
function twoCycle(
  answerMs: number,
  cycle = [
    { owner: "w1", name: "a" },
    { owner: "w0", name: "b" },
  ],
): ManyLocksEvent[] {
  return [
    at(1, { worker: "w0", ev: "grant", id: "w0#0/a", name: "a", token: "1" }),
    at(2, { worker: "w1", ev: "grant", id: "w1#0/b", name: "b", token: "1" }),
    at(3, { worker: "w0", ev: "start", id: "w0#0/b", name: "b" }),
    at(10, { worker: "w1", ev: "start", id: "w1#0/a", name: "a" }),
    at(answerMs, { worker: "w1", ev: "end", id: "w1#0/a", name: "a", outcome: "deadlock", cycle }),
    at(answerMs + 1, { worker: "w1", ev: "exit", id: "w1#0/b", name: "b" }),
    at(answerMs + 2, { worker: "w0", ev: "grant", id: "w0#0/b", name: "b", token: "2" }),
    at(answerMs + 2, { worker: "w0", ev: "end", id: "w0#0/b", name: "b", outcome: "granted" }),
  ];
}

// The many-locks test (npm run test:many-locks) trusts this checker; these cases show it catches what it must.
describe("checkDeadlockLog()", () => {
  it("accepts a DEADLOCK that names the cycle in the logs, and measures how long the cycle lasted", () => {
    const report = checkDeadlockLog(twoCycle(900), 2500);
    expect(report).to.include({ deadlocks: 1, cycles: 1, longestCycleMs: 890 });
  });

  it("refuses a DEADLOCK naming a cycle that did not exist then", () => {
    const wrong = [
      { owner: "w1", name: "a" },
      { owner: "w2", name: "b" },
    ];
    expect(() => checkDeadlockLog(twoCycle(900, wrong), 2500)).to.throw(/not a cycle in the logs/);
  });

  it("refuses a DEADLOCK answered before the cycle closed (a false positive)", () => {
    const events = twoCycle(900).map((e) =>
      e.ev === "end" && e.outcome === "deadlock" ? { ...e, at: String(5 * MS) } : e,
    );
    expect(() => checkDeadlockLog(events, 2500)).to.throw(/not a cycle in the logs/);
  });

  it("refuses a cycle that outlived the bound", () => {
    expect(() => checkDeadlockLog(twoCycle(4000), 2500)).to.throw(/lasted 3990 ms \(bound 2500 ms\)/);
  });

  it("does not count a worker waiting for a set as holding while waiting", () => {
    const events = [
      at(1, { worker: "w0", ev: "grant", id: "w0#0/a", name: "a", token: "1" }),
      at(2, { worker: "w1", ev: "start", id: "w1#0", name: "a+b", set: ["a", "b"] }),
      at(3, { worker: "w1", ev: "grant", id: "w1#0/b", name: "b", token: "1" }),
      at(3, { worker: "w1", ev: "end", id: "w1#0", name: "a+b", outcome: "granted" }),
      at(4, { worker: "w0", ev: "start", id: "w0#0/b", name: "b" }),
      at(5000, { worker: "w0", ev: "exit", id: "w0#0/a", name: "a" }),
    ];
    const report = checkDeadlockLog(events, 2500);
    expect(report).to.include({ cycles: 0, deadlocks: 0 });
    expect(Object.fromEntries(report.sets)).to.deep.equal({ granted: 1 });
  });
});
