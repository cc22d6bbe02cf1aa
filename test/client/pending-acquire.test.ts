import { expect } from "chai";
import { remainingWaitMs } from "../../client/session/requests/acquires-in-flight.js";

describe("remainingWaitMs()", () => {
  it("re-sends what is left of the original wait, measured from the first send", () => {
    expect(remainingWaitMs(10_000, 1_000, 4_000)).to.equal(7_000);
  });

  it("says 'ran-out' when nothing is left, and keeps 'forever' and try-once as they are", () => {
    expect(remainingWaitMs(3_000, 1_000, 4_000)).to.equal("ran-out");
    expect(remainingWaitMs(undefined, 1_000, 1_000_000)).to.equal("forever");
    expect(remainingWaitMs(0, 1_000, 1_000_000)).to.equal(0);
  });
});
