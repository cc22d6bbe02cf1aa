import { expect } from "chai";
import { cycleStillHolds, edgesOf, findDeadlocks } from "../../server/engine/deadlock/wait-for-graph.js";
import type { HolderState, LockState, StoreMode } from "../../server/store/store.js";
import type { HeldWait } from "../../server/store/wait-registry.js";

/** `who` (its session and owner) waits for `name` in `mode`, having arrived at `at`. */
const wait = (who: string, name: string, at: number, mode: StoreMode = "exclusive"): HeldWait => ({
  sessionId: who,
  owner: `o-${who}`,
  requestId: `r-${who}-${name}`,
  name,
  mode,
  clientName: who,
  coordinatorId: "c",
  queuedAtMs: at,
});

const holder = (who: string, mode: StoreMode = "exclusive"): HolderState => ({
  sessionId: who,
  owner: `o-${who}`,
  token: 1n,
  count: 1,
  mode,
  value: new Uint8Array(),
  leaseMs: 1000,
});

/** The state of `name`: its holders, and `waiting` queued on it. */
const lock = (name: string, holders: HolderState[], waiting: HeldWait[]): LockState => ({
  name,
  version: 1n,
  limit: undefined,
  holders,
  waiters: waiting
    .filter((w) => w.name === name)
    .map((w, i) => ({ ...w, position: i + 1, leaseMs: 1000, waitedMs: 0, priority: 0 })),
});

const states = (...ls: LockState[]) => new Map(ls.map((l) => [l.name, l]));
const cycles = (ws: HeldWait[], s: Map<string, LockState>) =>
  findDeadlocks(ws, s).map((d) => d.cycle.map((w) => `${w.sessionId}>${w.name}`));

describe("the wait-for graph", () => {
  it("finds a 2-cycle and makes its youngest wait the victim, first in the cycle", () => {
    const ws = [wait("a", "y", 1), wait("b", "x", 2)];
    const s = states(lock("x", [holder("a")], ws), lock("y", [holder("b")], ws));
    expect(cycles(ws, s)).to.deep.equal([["b>x", "a>y"]]);
    expect(cycleStillHolds(findDeadlocks(ws, s)[0].cycle, s)).to.equal(true);
  });

  it("breaks ties of arrival time by the larger session id, the same way everywhere", () => {
    const ws = [wait("b", "x", 5), wait("a", "y", 5)];
    const s = states(lock("x", [holder("a")], ws), lock("y", [holder("b")], ws));
    expect(cycles(ws, s)[0][0]).to.equal("b>x");
    expect(cycles([...ws].reverse(), s)[0][0]).to.equal("b>x");
  });

  it("fails one victim for two cycles through the same youngest wait, and one per disjoint cycle", () => {
    // a waits x (b, c hold it shared); b and c each wait y, held by a: two cycles through a's wait.
    const shared = [wait("a", "x", 9), wait("b", "y", 1), wait("c", "y", 2)];
    const s1 = states(
      lock("x", [holder("b", "shared"), holder("c", "shared")], shared),
      lock("y", [holder("a")], shared),
    );
    expect(cycles(shared, s1).map((c) => c[0])).to.deep.equal(["a>x"]);
    const two = [wait("a", "y", 1), wait("b", "x", 2), wait("c", "w", 3), wait("d", "v", 4)];
    const s2 = states(
      lock("x", [holder("a")], two),
      lock("y", [holder("b")], two),
      lock("v", [holder("c")], two),
      lock("w", [holder("d")], two),
    );
    expect(cycles(two, s2).map((c) => c[0])).to.deep.equal(["d>v", "b>x"]);
  });

  it("draws no edge from a shared wait to shared holders, or from a wait no longer queued", () => {
    const w = wait("a", "s", 1, "shared");
    expect(edgesOf(w, lock("s", [holder("b", "shared"), holder("c", "exclusive")], [w]))).to.deep.equal(["c\u0000o-c"]);
    expect(edgesOf(w, lock("s", [holder("b", "shared")], [w]))).to.deep.equal([]);
    expect(edgesOf(w, lock("s", [holder("c")], []))).to.deep.equal([]);
  });

  it("finds no cycle in a chain, and none once a holder of the cycle has left", () => {
    const ws = [wait("a", "y", 1), wait("b", "x", 2)];
    expect(cycles(ws, states(lock("x", [holder("c")], ws), lock("y", [holder("b")], ws)))).to.deep.equal([]);
    const gone = states(lock("x", [], ws), lock("y", [holder("b")], ws));
    expect(cycleStillHolds([ws[1], ws[0]], gone)).to.equal(false);
  });
});
