import { expect } from "chai";
import { checkSharedLog } from "./harness/check-shared-log.js";

// The interop test (npm run test:interop) trusts this checker; these cases show it catches what it must.
describe("checkSharedLog()", () => {
  it("accepts alternating enter/exit pairs with increasing tokens and counts holds per language", () => {
    const report = checkSharedLog("enter ts-1 3\nexit ts-1 3\nenter go-2 5\nexit go-2 5\nenter go-1 9\nexit go-1 9\n");
    expect(report.holds).to.equal(3);
    expect(Object.fromEntries(report.holdsByLanguage)).to.deep.equal({ ts: 1, go: 2 });
    expect(report.languageSwitches).to.equal(1);
  });

  it("rejects an enter while another worker is inside", () => {
    expect(() => checkSharedLog("enter ts-1 1\nenter go-1 2\nexit go-1 2\nexit ts-1 1\n")).to.throw(
      /line 2 .*go-1 entered while ts-1 \(token 1\) was inside/,
    );
  });

  it("rejects an exit by a worker that is not inside", () => {
    expect(() => checkSharedLog("enter ts-1 1\nexit java-1 1\n")).to.throw(/line 2 .*exit while ts-1/);
  });

  it("rejects a token that does not strictly increase", () => {
    expect(() => checkSharedLog("enter ts-1 4\nexit ts-1 4\nenter go-1 4\nexit go-1 4\n")).to.throw(
      /line 3 .*token 4 is not greater than 4/,
    );
  });

  it("rejects a lost lock", () => {
    expect(() => checkSharedLog("enter ts-1 1\nlost ts-1 1\n")).to.throw(/ts-1 lost its lock/);
  });

  it("rejects a log that ends with a worker inside", () => {
    expect(() => checkSharedLog("enter ts-1 1\n")).to.throw(/line 1: ts-1 entered and never exited/);
  });

  it("rejects a malformed line, naming it", () => {
    expect(() => checkSharedLog("enter ts-1 1\nexit ts-1 1 extra\n")).to.throw(/line 2 .*not "enter\|exit\|lost/);
  });
});
