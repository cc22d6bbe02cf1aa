import { expect } from "chai";
import { WaiterClock } from "../../server/console/waiter-clock.js";

describe("WaiterClock", () => {
  const waiter = (requestId: string, position: number) => ({
    sessionId: "s",
    owner: "o",
    requestId,
    position,
    mode: "exclusive" as const,
    leaseMs: 1000,
  });

  it("ages waiters from when it first saw them, marking those queued before its first look 'at least'", () => {
    const clock = new WaiterClock();
    expect(clock.ages([waiter("a", 1)], 1000)).to.deep.equal([{ waitedMs: 0, atLeast: true }]);
    expect(clock.ages([waiter("a", 1), waiter("b", 2)], 3500)).to.deep.equal([
      { waitedMs: 2500, atLeast: true },
      { waitedMs: 0, atLeast: false },
    ]);
    // "a" left; a waiter that comes back later is a new arrival.
    expect(clock.ages([waiter("b", 1)], 4000)).to.deep.equal([{ waitedMs: 500, atLeast: false }]);
    expect(clock.ages([waiter("b", 1), waiter("a", 2)], 4200)).to.deep.equal([
      { waitedMs: 700, atLeast: false },
      { waitedMs: 0, atLeast: false },
    ]);
  });
});
