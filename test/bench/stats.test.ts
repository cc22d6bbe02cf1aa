import { expect } from "chai";
import { cdfPoints, jainIndex, quantile, summarize } from "../../bench/stats.js";

describe("bench stats", () => {
  describe("jainIndex()", () => {
    it("is 1 when every contender got the same count", () => {
      expect(jainIndex([5, 5, 5, 5])).to.equal(1);
    });

    it("is 1/n when one contender got everything", () => {
      expect(jainIndex([12, 0, 0, 0])).to.equal(0.25);
    });
  });

  describe("quantile()", () => {
    it("picks by nearest rank", () => {
      const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
      expect(quantile(sorted, 0.5)).to.equal(50);
      expect(quantile(sorted, 0.99)).to.equal(99);
      expect(quantile(sorted, 1)).to.equal(100);
    });

    it("is NaN for an empty sample", () => {
      expect(quantile([], 0.5)).to.be.NaN;
    });
  });

  describe("summarize()", () => {
    it("reports mean, p50, p99 and max of an unsorted sample", () => {
      const s = summarize([4, 1, 3, 2]);
      expect(s).to.deep.equal({ count: 4, meanMs: 2.5, p50Ms: 2, p99Ms: 4, maxMs: 4 });
    });
  });

  describe("cdfPoints()", () => {
    it("ends at share 1 on the largest value", () => {
      const points = cdfPoints([1, 2, 3, 4, 5], 2);
      expect(points.at(-1)).to.deep.equal({ x: 5, y: 1 });
      expect(points.every((p, i) => i === 0 || p.y >= points[i - 1].y)).to.equal(true);
    });
  });
});
