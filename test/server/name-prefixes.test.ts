import { expect } from "chai";
import { NamePrefixes } from "../../server/metrics/name-prefixes.js";

describe("NamePrefixes", () => {
  describe("of()", () => {
    it("labels a name by its text up to its depth-th '/', or its last '/' when it has fewer", () => {
      const depth2 = new NamePrefixes({ depth: 2 });
      expect(["a/b/c/d", "a/b/c", "a/b", "a/"].map((n) => depth2.of(n))).to.deep.equal(["a/b/", "a/b/", "a/", "a/"]);
      const depth1 = new NamePrefixes();
      expect(["billing/leader", "billing/jobs/7"].map((n) => depth1.of(n))).to.deep.equal(["billing/", "billing/"]);
    });

    it("labels a name without '/' as other, never as itself", () => {
      expect(new NamePrefixes({ depth: 3 }).of("leader")).to.equal("other");
    });

    it("labels by the longest listed prefix a name starts with, and other when none matches", () => {
      const listed = new NamePrefixes({ prefixes: ["jobs/", "jobs/nightly/", "billing/"], depth: 5 });
      expect(["jobs/nightly/7", "jobs/x", "billing/a/b", "web/a"].map((n) => listed.of(n))).to.deep.equal([
        "jobs/nightly/",
        "jobs/",
        "billing/",
        "other",
      ]);
    });

    it("hands out at most maxLabels labels; names that would add more become other", () => {
      const capped = new NamePrefixes({ maxLabels: 2 });
      expect(["a/1", "b/1", "c/1", "a/2", "b/2"].map((n) => capped.of(n))).to.deep.equal([
        "a/",
        "b/",
        "other",
        "a/",
        "b/",
      ]);
    });
  });
});
