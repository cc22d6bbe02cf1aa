import { expect } from "chai";
import { ReleaseJournal } from "../../../server/store/redis/journal/release-journal.js";

const hold = (owner: string) => ({ name: "a", sessionId: "s1", owner, token: 7n });

describe("ReleaseJournal (the let-gos replayed on a new master)", () => {
  let nowMs = 0;
  const journal = (windowMs = 1000, maxEntries = 3) => new ReleaseJournal({ windowMs, maxEntries }, () => nowMs);
  beforeEach(() => {
    nowMs = 0;
  });

  it("keeps final releases by token, never a release that left counts or one without a token", () => {
    const j = journal(1000, 10);
    j.letGo({ ...hold("final"), requestId: "" }, "one", { kind: "released", holdCount: 0 });
    j.letGo({ ...hold("left"), requestId: "" }, "one", { kind: "released", holdCount: 1 });
    j.letGo({ ...hold("not-held"), requestId: "" }, "all", { kind: "not-held" });
    j.letGo({ name: "a", sessionId: "s1", owner: "untold", requestId: "" }, "all", { kind: "released", holdCount: 0 });
    j.released({ name: "a", sessionId: "s2", owner: "o", token: 9n }, { kind: "released", holdCount: 0 });
    j.released({ name: "a", sessionId: "s3", owner: "o" }, { kind: "not-held" });
    expect(j.recent().map((e) => (e.kind === "release" ? `${e.sessionId}:${e.owner}@${e.token}` : ""))).to.deep.equal([
      "s1:final@7",
      "s2:o@9",
    ]);
  });

  it("keeps every cancel, whatever it found, and no abandon (its request id is re-sent on resume)", () => {
    const j = journal(1000, 10);
    const claim = { name: "a", sessionId: "s1", owner: "o", requestId: "r1" };
    j.letGo(claim, "cancel", { kind: "gone" });
    j.letGo({ ...claim, requestId: "r2" }, "abandon", { kind: "withdrawn" });
    j.letGo({ ...claim, requestId: "r3" }, "cancel", { kind: "grant-released" });
    expect(j.recent().map((e) => (e.kind === "withdraw" ? `${e.claim.requestId} ${e.how}` : ""))).to.deep.equal([
      "r1 cancel",
      "r3 cancel",
    ]);
  });

  it("drops entries older than its window", () => {
    const j = journal(1000, 10);
    j.released(hold("old"), { kind: "released", holdCount: 0 });
    nowMs = 600;
    j.released(hold("new"), { kind: "released", holdCount: 0 });
    nowMs = 1200;
    expect(j.recent().map((e) => (e.kind === "release" ? e.owner : ""))).to.deep.equal(["new"]);
    nowMs = 1700;
    expect(j.size).to.equal(0);
  });

  it("keeps at most maxEntries, the newest", () => {
    const j = journal(1000, 3);
    for (let i = 0; i < 5; i++) j.released(hold(`o${i}`), { kind: "released", holdCount: 0 });
    expect(j.recent().map((e) => (e.kind === "release" ? e.owner : ""))).to.deep.equal(["o2", "o3", "o4"]);
  });

  it("stays bounded over many entries (its array is compacted as the head is dropped)", () => {
    const j = journal(10, 100_000);
    for (let i = 0; i < 50_000; i++) {
      nowMs = i;
      j.released(hold("o"), { kind: "released", holdCount: 0 });
    }
    expect(j.size).to.equal(11);
    expect((j as unknown as { entries: unknown[] }).entries.length).to.be.below(3000);
  });
});
