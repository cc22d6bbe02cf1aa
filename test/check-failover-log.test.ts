import { expect } from "chai";
import { type ChildEvent, checkFailoverLog } from "./harness/check-failover-log.js";

type Step = [worker: string, ev: ChildEvent["ev"], id: string, name: string, token: number, at: number];

/** Builds a log from [worker, event, id, name, token, at] rows; a grant also ends its acquire. */
function log(...steps: Step[]): ChildEvent[] {
  return steps.flatMap(([worker, ev, id, name, token, at]) => {
    const e: ChildEvent = { worker, ev, id, name, token: String(token), at: String(at) };
    if (ev === "start") return [{ worker, ev, id, name, at: String(at) }];
    if (ev === "grant") return [e, { worker, ev: "end", id, name, outcome: "granted", at: String(at) }];
    return [e];
  });
}

const SEM = new Map([["sem", 2]]);

// The failover test (npm run test:failover) trusts this checker; these cases show it catches what it must.
describe("checkFailoverLog()", () => {
  it("accepts hand-offs with increasing tokens and a semaphore at its limit, and counts them", () => {
    const report = checkFailoverLog(
      log(
        ["w0", "start", "w0#0", "a", 0, 1],
        ["w1", "start", "w1#0", "a", 0, 2],
        ["w0", "grant", "w0#0", "a", 7, 3],
        ["w0", "exit", "w0#0", "a", 7, 4],
        ["w1", "grant", "w1#0", "a", 8, 4],
        ["w1", "lost", "w1#0", "a", 8, 9],
        ["w2", "start", "w2#0", "sem", 0, 1],
        ["w3", "start", "w3#0", "sem", 0, 1],
        ["w2", "grant", "w2#0", "sem", 3, 2],
        ["w3", "grant", "w3#0", "sem", 4, 2],
        ["w2", "exit", "w2#0", "sem", 3, 5],
        ["w3", "exit", "w3#0", "sem", 4, 5],
      ),
      SEM,
    );
    expect(report).to.include({ acquires: 4, grants: 4, lost: 1 });
    expect(Object.fromEntries(report.grantsByName)).to.deep.equal({ a: 2, sem: 2 });
  });

  it("rejects a fencing token issued twice on one name", () => {
    const events = log(
      ["w0", "grant", "w0#0", "sem", 5, 1],
      ["w0", "exit", "w0#0", "sem", 5, 2],
      ["w1", "grant", "w1#0", "sem", 5, 3],
      ["w1", "exit", "w1#0", "sem", 5, 4],
    );
    expect(() => checkFailoverLog(events, SEM)).to.throw(/sem: token 5 issued twice \(w0#0 and w1#0\)/);
  });

  it("rejects a token that does not increase in grant order", () => {
    const events = log(
      ["w0", "grant", "w0#0", "a", 9, 1],
      ["w0", "exit", "w0#0", "a", 9, 2],
      ["w1", "grant", "w1#0", "a", 4, 3],
      ["w1", "exit", "w1#0", "a", 4, 4],
    );
    expect(() => checkFailoverLog(events, SEM)).to.throw(/a: token 4 \(w1#0\) granted after 9 \(w0#0\) is not greater/);
  });

  it("rejects two holders of a lock at once", () => {
    const events = log(
      ["w0", "grant", "w0#0", "a", 1, 10],
      ["w1", "grant", "w1#0", "a", 2, 15],
      ["w0", "exit", "w0#0", "a", 1, 20],
      ["w1", "exit", "w1#0", "a", 2, 25],
    );
    expect(() => checkFailoverLog(events, SEM)).to.throw(/a: w1#0 \(token 2\) was granted 5 ns before w0#0/);
  });

  it("rejects a semaphore above its limit", () => {
    const events = log(
      ["w0", "grant", "w0#0", "sem", 1, 1],
      ["w1", "grant", "w1#0", "sem", 2, 2],
      ["w2", "grant", "w2#0", "sem", 3, 3],
      ["w0", "exit", "w0#0", "sem", 1, 4],
      ["w1", "exit", "w1#0", "sem", 2, 4],
      ["w2", "exit", "w2#0", "sem", 3, 4],
    );
    expect(() => checkFailoverLog(events, SEM)).to.throw(/sem: 3 holders at once \(limit 2\) when w2#0 entered/);
  });

  it("rejects an acquire that never ended", () => {
    expect(() => checkFailoverLog(log(["w0", "start", "w0#0", "a", 0, 1]), SEM)).to.throw(
      /w0: acquire w0#0 of a never ended/,
    );
  });

  it("rejects a hold that never ended", () => {
    expect(() => checkFailoverLog(log(["w0", "grant", "w0#0", "a", 1, 1]), SEM)).to.throw(
      /w0: hold w0#0 of a never ended/,
    );
  });

  it("rejects a write the token-checking resource refused", () => {
    expect(() => checkFailoverLog(log(["w1", "refused", "w1#3", "a", 4, 1]), SEM)).to.throw(
      /the resource refused token 4 on a/,
    );
  });

  it("with lateMs, rejects an acquire that ended more than that past its wait, and reports the most past it", () => {
    const ms = 1_000_000;
    const run = (endAtMs: number) =>
      [
        { worker: "w0", ev: "start", id: "w0#0", name: "a", waitMs: 3000, at: String(10 * ms) },
        { worker: "w0", ev: "end", id: "w0#0", name: "a", outcome: "TurnstileError", at: String(endAtMs * ms) },
      ] as ChildEvent[];
    const onTime = checkFailoverLog(run(10 + 3000 + 2000), SEM, { lateMs: 2000 });
    expect(onTime.mostPastWaitMs).to.equal(2000);
    expect(() => checkFailoverLog(run(10 + 3000 + 2001), SEM, { lateMs: 2000 })).to.throw(
      /w0: acquire w0#0 of a ended 2001 ms past its wait of 3000 ms \(at most 2000\)/,
    );
    // Without the bound it is only reported.
    expect(checkFailoverLog(run(10 + 3000 + 2001), SEM).mostPastWaitMs).to.equal(2001);
  });
});
