import { expect } from "chai";
import { RenewalPlans } from "../../server/engine/lifecycle/renewal-plans.js";
import { type Hold, holdKey, type Pending, Session } from "../../server/engine/sessions/session.js";
import { SILENT_SINK } from "../../server/engine/sessions/session-sink.js";

/**
 * What a keepalive renews (RenewalPlans): the session's holds and queue entries by name, and for a
 * session that only holds, the same frozen list again while its holds stay the same (issue 25).
 */
describe("RenewalPlans (what a keepalive renews)", () => {
  const hold = (name: string, owner = "o"): Hold => ({ name, owner, token: 1n, count: 1 });
  const sessionWith = (...holds: Hold[]) => {
    const session = new Session("s1", "test", 30_000, SILENT_SINK);
    for (const h of holds) session.held.set(holdKey(h.name, h.owner), h);
    return session;
  };

  it("lists each name once with its owners, and the holds behind them in the same order", () => {
    const [a1, b, a2] = [hold("a", "o1"), hold("b"), hold("a", "o2")];
    const renewal = new RenewalPlans().of(sessionWith(a1, b, a2));
    expect(renewal.locks).to.deep.equal([
      { name: "a", owners: ["o1", "o2"], waiters: [] },
      { name: "b", owners: ["o"], waiters: [] },
    ]);
    expect(renewal.holds).to.deep.equal([[a1, a2], [b]]);
  });

  it("gives a session that only holds the same frozen list until one of its holds changes", () => {
    const plans = new RenewalPlans();
    const session = sessionWith(hold("a"), hold("b"));
    const first = plans.of(session);
    expect(Object.isFrozen(first.locks) && first.locks.every((l) => Object.isFrozen(l.owners))).to.equal(true);
    expect(plans.of(session)).to.equal(first);
    session.held.set(holdKey("c", "o"), hold("c"));
    const second = plans.of(session);
    expect(second.locks.map((l) => l.name)).to.deep.equal(["a", "b", "c"]);
    session.held.set(holdKey("c", "o"), hold("c"));
    expect(plans.of(session), "a new Hold of the same name and owner").to.not.equal(second);
  });

  it("leaves out a hold being released, and renews without it, then with it again", () => {
    const plans = new RenewalPlans();
    const b = hold("b");
    const session = sessionWith(hold("a"), b);
    plans.of(session);
    b.releasing = true;
    expect(plans.of(session).locks.map((l) => l.name)).to.deep.equal(["a"]);
    b.releasing = false;
    expect(plans.of(session).locks.map((l) => l.name)).to.deep.equal(["a", "b"]);
  });

  it("builds the list of a session with an acquire pending every time, its queue entry included", () => {
    const plans = new RenewalPlans();
    const session = sessionWith(hold("a"));
    const pending = { session, requestId: "r1", name: "a", owner: "o2" } as Pending;
    session.pending.set("r1", pending);
    const first = plans.of(session);
    expect(first.locks).to.deep.equal([
      { name: "a", owners: ["o"], waiters: [{ name: "a", sessionId: "s1", owner: "o2", requestId: "r1" }] },
    ]);
    expect(Object.isFrozen(first.locks)).to.equal(false);
    expect(plans.of(session)).to.not.equal(first);
  });
});
