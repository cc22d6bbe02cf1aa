import { expect } from "chai";
import { parseOptions } from "../../bench/options.js";

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
