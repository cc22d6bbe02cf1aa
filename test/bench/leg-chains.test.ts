import { expect } from "chai";
import { followChains, HAND_OFF, UNCONTENDED_ACQUIRE } from "../../bench/anatomy/leg-chains.js";
import type { Mark, MarkSource } from "../../bench/anatomy/marks.js";

const us = 1000; // ns
const m = (t: number, source: MarkSource, event: string, sessionId: string, requestId = "", name = "L"): Mark => ({
  t: t * us,
  source,
  event,
  sessionId,
  requestId,
  name,
});

/** One hand-off from session A (release 5) to session B (acquire 9), with a queued re-acquire by A in between. */
function handOffMarks(at: number): Mark[] {
  return [
    m(at, "client", "release-called", "A"),
    m(at + 10, "client", "sent:release", "A", "5"),
    m(at + 20, "client", "sent:acquire", "A", "6"), // A asks again: queued, never granted here
    m(at + 40, "coordinator", "decode-start:release", "A", "5"),
    m(at + 45, "coordinator", "decoded:release", "A", "5"),
    m(at + 60, "coordinator", "read:release", "A", "5"),
    m(at + 62, "coordinator", "admitted", "A", "5"),
    m(at + 70, "coordinator", "store-sent:release", "A", "", "L"),
    m(at + 90, "coordinator", "flush", "", "", ""),
    m(at + 150, "coordinator", "store-answered:release", "A", "", "L"),
    m(at + 160, "coordinator", "written:acquired", "B", "9"),
    m(at + 161, "coordinator", "written:released", "A", "5"),
    m(at + 220, "client", "received:acquired", "B", "9"),
    m(at + 230, "client", "resolved", "B"),
  ];
}

describe("anatomy leg chains", () => {
  it("follows a hand-off from the holder's release to the waiter's resolved acquire", () => {
    const { chains, unmatched } = followChains(handOffMarks(0), HAND_OFF);
    expect(unmatched).to.equal(0);
    expect(chains).to.have.length(1);
    expect(chains[0].legsMs).to.deep.equal([0.01, 0.03, 0.005, 0.015, 0.002, 0.008, 0.02, 0.06, 0.01, 0.06, 0.01]);
    expect(chains[0].totalMs).to.equal(0.23);
  });

  it("keeps a chain whose optional flush is missing, timing the next leg from the step before", () => {
    const marks = handOffMarks(0).filter((x) => x.event !== "flush");
    const { chains } = followChains(marks, HAND_OFF);
    expect(chains[0].legsMs[6]).to.equal(undefined);
    expect(chains[0].legsMs[7]).to.equal(0.08);
  });

  it("leaves out (and counts) a hand-off whose grant never went to another session", () => {
    const marks = handOffMarks(0).filter((x) => !(x.event === "written:acquired"));
    const { chains, unmatched } = followChains(marks, HAND_OFF);
    expect(chains).to.have.length(0);
    expect(unmatched).to.equal(1);
  });

  it("keeps only chains that start inside the window", () => {
    const marks = [...handOffMarks(0), ...handOffMarks(1000)];
    expect(followChains(marks, HAND_OFF).chains).to.have.length(2);
    expect(followChains(marks, HAND_OFF, 500 * us).chains).to.have.length(1);
    expect(followChains(marks, HAND_OFF, 0, 500 * us).chains).to.have.length(1);
  });

  it("follows an uncontended acquire by its request id", () => {
    const marks = [
      m(0, "client", "acquire-called", "S"),
      m(5, "client", "sent:acquire", "S", "1"),
      m(30, "coordinator", "decode-start:acquire", "S", "1"),
      m(35, "coordinator", "decoded:acquire", "S", "1"),
      m(40, "coordinator", "read:acquire", "S", "1"),
      m(41, "coordinator", "admitted", "S", "1"),
      m(50, "coordinator", "store-sent:acquire", "S", "1"),
      m(60, "coordinator", "flush", "", "", ""),
      m(100, "coordinator", "store-answered:acquire", "S", "1"),
      m(110, "coordinator", "written:acquired", "S", "1"),
      m(150, "client", "received:acquired", "S", "1"),
      m(155, "client", "resolved", "S"),
    ];
    const { chains } = followChains(marks, UNCONTENDED_ACQUIRE);
    expect(chains).to.have.length(1);
    expect(chains[0].totalMs).to.equal(0.155);
    expect(chains[0].legsMs[7]).to.equal(0.04);
  });
});
