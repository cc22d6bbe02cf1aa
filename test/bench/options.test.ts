import { expect } from "chai";
import { parseOptions } from "../../bench/options.js";

describe("bench options: --scale-out-only", () => {
  it("keeps the shapes and leaves out the one-process workloads, the anatomy and the fleet", () => {
    const o = parseOptions(["--scale-out-only"], "/repo");
    expect(o).to.include({ scaleOutOnly: true, shapes: true, anatomy: false, fleet: null });
    expect(o.handOffContenders).to.deep.equal([]);
    expect(o.spreadWorkers).to.deep.equal([]);
    expect(parseOptions([], "/repo")).to.include({ scaleOutOnly: false, anatomy: true });
  });

  it("refuses --no-shapes beside it, naming both flags", () => {
    expect(() => parseOptions(["--scale-out-only", "--no-shapes"], "/repo")).to.throw(
      /--scale-out-only: .*drop --no-shapes/,
    );
  });
});

describe("bench options: --discipline", () => {
  it("runs both hand-off disciplines by default, at once first", () => {
    expect(parseOptions([], "/repo").disciplines).to.deep.equal(["at-once", "after-turn"]);
    expect(parseOptions(["--discipline", "both"], "/repo").disciplines).to.deep.equal(["at-once", "after-turn"]);
  });

  it("runs one discipline when named", () => {
    expect(parseOptions(["--discipline", "at-once"], "/repo").disciplines).to.deep.equal(["at-once"]);
    expect(parseOptions(["--discipline", "after-turn"], "/repo").disciplines).to.deep.equal(["after-turn"]);
  });

  it("names the flag and the values it takes for anything else", () => {
    expect(() => parseOptions(["--discipline", "sometimes"], "/repo")).to.throw(
      '--discipline: expected at-once, after-turn or both, got "sometimes"',
    );
  });
});
