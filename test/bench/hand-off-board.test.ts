import { expect } from "chai";
import { HandOffBoard } from "../../bench/workloads/hand-off-board.js";

describe("HandOffBoard", () => {
  it("lets a contender re-enter only after someone else entered", async () => {
    const board = new HandOffBoard(2);
    const { entry } = board.enter(0);
    let released = false;
    const waiting = board.untilEnteredAfter(entry).then(() => {
      released = true;
    });
    await Promise.resolve();
    expect(released).to.equal(false);
    board.enter(1);
    await waiting;
    expect(released).to.equal(true);
  });

  it("holds a release until the previous holder has asked again", async () => {
    const board = new HandOffBoard(2);
    board.enter(0);
    const { entry, previous } = board.enter(1);
    expect(previous).to.equal(0);
    let released = false;
    const waiting = board.untilIssuedSince(0, entry).then(() => {
      released = true;
    });
    await Promise.resolve();
    expect(released).to.equal(false);
    board.issued(0);
    await waiting;
    expect(released).to.equal(true);
  });

  it("releases every waiter when closed", async () => {
    const board = new HandOffBoard(1);
    const waiting = board.untilEnteredAfter(10);
    board.close();
    await waiting;
  });
});
