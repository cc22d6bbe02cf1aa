import { expect } from "chai";
import { buildClaims, heldOfClaims, reconcileResume } from "../../client/session/resume-reconciliation.js";

const hold = (name: string, fencingToken: bigint, live: number) => ({
  name,
  owner: "o",
  fencingToken,
  live,
  holding: name,
});
const release = (requestId: string, name: string, fencingToken: bigint) => ({
  requestId,
  name,
  owner: "o",
  fencingToken,
});
const held = (name: string, fencingToken: bigint, holdCount: number) => ({ name, owner: "o", fencingToken, holdCount });

describe("resume reconciliation", () => {
  describe("buildClaims()", () => {
    it("claims live handles plus releases in flight per (name, owner), and holds with only releases left", () => {
      const { claims, stale } = buildClaims(
        [hold("a", 1n, 2), hold("b", 2n, 1)],
        [release("r1", "a", 1n), release("r2", "c", 5n), release("r3", "c", 5n)],
      );
      expect(heldOfClaims(claims)).to.deep.equal([held("a", 1n, 3), held("b", 2n, 1), held("c", 5n, 2)]);
      expect(claims.map((c) => [c.releaseIds, c.holding])).to.deep.equal([
        [["r1"], "a"],
        [[], "b"],
        [["r2", "r3"], undefined],
      ]);
      expect(stale).to.deep.equal([]);
    });

    it("marks releases for an older token of a claimed hold stale instead of claiming them", () => {
      const { claims, stale } = buildClaims(
        [hold("a", 9n, 1)],
        [release("old", "a", 4n), release("x1", "x", 2n), release("x2", "x", 3n)],
      );
      expect(heldOfClaims(claims)).to.deep.equal([held("a", 9n, 1), held("x", 3n, 1)]);
      expect(stale).to.deep.equal(["old", "x1"]);
    });
  });

  describe("reconcileResume()", () => {
    it("keeps the holds the server lists with the same token and loses the others", () => {
      const { claims } = buildClaims([hold("a", 1n, 1), hold("b", 2n, 1), hold("c", 3n, 1)], []);
      const outcomes = reconcileResume(claims, [held("a", 1n, 1), held("b", 7n, 1)]);
      expect(outcomes).to.deep.equal([
        { kept: true, resend: 0 },
        { kept: false, resend: 0 },
        { kept: false, resend: 0 },
      ]);
    });

    it("re-sends the releases the server's hold count says never arrived, at most those in flight", () => {
      const { claims } = buildClaims(
        [hold("a", 1n, 1), hold("b", 2n, 0)],
        [release("a1", "a", 1n), release("a2", "a", 1n), release("b1", "b", 2n)],
      );
      // a: 1 live + 2 in flight; the server still counts 2, so one release arrived and one did not.
      // b: no live handle; the server counts 5 (more than claimed): only the 1 in flight is re-sent.
      expect(reconcileResume(claims, [held("a", 1n, 2), held("b", 2n, 5)])).to.deep.equal([
        { kept: true, resend: 1 },
        { kept: true, resend: 1 },
      ]);
    });

    it("does not read a count a pending re-entry may explain as a lost release", () => {
      const { claims } = buildClaims([hold("a", 1n, 1)], [release("a1", "a", 1n)]);
      // 2 = 1 live + either the release that never arrived, or the re-entry granted during the break.
      expect(reconcileResume(claims, [held("a", 1n, 2)], [{ name: "a", owner: "o" }])).to.deep.equal([
        { kept: true, resend: 0 },
      ]);
      expect(reconcileResume(claims, [held("a", 1n, 3)], [{ name: "a", owner: "o" }])).to.deep.equal([
        { kept: true, resend: 1 },
      ]);
    });

    it("re-sends nothing when every release in flight arrived", () => {
      const { claims } = buildClaims([hold("a", 1n, 1)], [release("a1", "a", 1n)]);
      expect(reconcileResume(claims, [held("a", 1n, 1)])).to.deep.equal([{ kept: true, resend: 0 }]);
    });
  });
});
