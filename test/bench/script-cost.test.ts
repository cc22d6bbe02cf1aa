import { expect } from "chai";
import { measureScriptCosts } from "../../bench/script-cost.js";

describe("bench/script-cost.ts", () => {
  it("measures each hot-path script on the path it names, with its calls counted", async () => {
    const costs = await measureScriptCosts(20);
    // Each path's reply code (the scripts' contract headers) and redis.call count per run; the baselines
    // are not read (code 0): the trivial script's 2 calls, and the clock read of a script cut after its includes.
    expect(costs.map((c) => [c.path, c.code, c.calls])).to.deep.equal([
      ["acquire, free lock (granted)", 1, 10],
      ["release, nobody waiting (released)", 11, 8],
      ["acquire, lock held (queued)", 2, 7],
      ["release that grants the waiter (released)", 11, 17],
      ["trivial script (SET, GET)", 0, 2],
      ["acquire.lua cut after its includes", 0, 1],
      ["release.lua cut after its includes", 0, 1],
    ]);
    for (const c of costs) expect(c.scriptUs).to.be.greaterThan(c.callsUs);
  });
});
