import type { LockState } from "../../store/store.js";
import type { HeldWait } from "../../store/wait-registry.js";

/** One deadlock found: the cycle's waits, starting with the victim (the youngest of them). */
export interface Deadlock {
  /** Each wait waits for a lock the next one's (session, owner) holds; the last's lock is held by the first. */
  cycle: HeldWait[];
}

/** The node of the wait-for graph a wait or a holder belongs to: its (session, owner). */
function nodeOf(x: { sessionId: string; owner: string }): string {
  return `${x.sessionId}\u0000${x.owner}`;
}

/**
 * The (session, owner) nodes `w` certainly waits for in `state`: AND-edges only, so a cycle of them is
 * a deadlock. An exclusive wait needs every holder gone; a shared wait needs the exclusive holders gone
 * (blocked only by a full shared limit it needs just one holder to leave: no edge). None when `w` is no
 * longer queued on the lock (its registry entry is stale) or the state was not read.
 */
export function edgesOf(w: HeldWait, state: LockState | undefined): string[] {
  if (!state?.waiters.some((q) => q.sessionId === w.sessionId && q.requestId === w.requestId)) return [];
  const self = nodeOf(w);
  const targets = state.holders
    .filter((h) => w.mode === "exclusive" || h.mode === "exclusive")
    .map(nodeOf)
    .filter((n) => n !== self);
  return [...new Set(targets)].sort();
}

/** Youngest first: latest queued, ties by the larger session id, then request id (every coordinator agrees). */
function youngestFirst(a: HeldWait, b: HeldWait): number {
  if (a.queuedAtMs !== b.queuedAtMs) return b.queuedAtMs - a.queuedAtMs;
  if (a.sessionId !== b.sessionId) return a.sessionId < b.sessionId ? 1 : -1;
  return a.requestId < b.requestId ? 1 : a.requestId > b.requestId ? -1 : 0;
}

/**
 * The deadlocks among `waits`, given the states of the locks they wait for. The youngest wait that
 * lies on a cycle is its victim and leaves the graph (that breaks every cycle through it); then the
 * next youngest, until no cycle is left: one victim per cycle, the same on every coordinator that
 * reads the same graph.
 */
export function findDeadlocks(waits: readonly HeldWait[], states: ReadonlyMap<string, LockState>): Deadlock[] {
  const edges = new Map<HeldWait, string[]>();
  const byNode = new Map<string, HeldWait[]>();
  for (const w of [...waits].sort(youngestFirst)) {
    const targets = edgesOf(w, states.get(w.name));
    if (targets.length === 0) continue;
    edges.set(w, targets);
    byNode.set(nodeOf(w), [...(byNode.get(nodeOf(w)) ?? []), w]);
  }
  const found: Deadlock[] = [];
  for (const w of edges.keys()) {
    const path = pathBack(w, edges, byNode);
    if (!path) continue;
    found.push({ cycle: [w, ...path] });
    const mine = byNode.get(nodeOf(w))?.filter((x) => x !== w) ?? [];
    byNode.set(nodeOf(w), mine);
    edges.delete(w);
  }
  return found;
}

/** The waits of a shortest path from a node `w` waits for back to `w`'s node (breadth first), or undefined. */
function pathBack(
  w: HeldWait,
  edges: ReadonlyMap<HeldWait, string[]>,
  byNode: ReadonlyMap<string, HeldWait[]>,
): HeldWait[] | undefined {
  const home = nodeOf(w);
  const via = new Map<string, { from: string; wait: HeldWait } | null>();
  const queue: string[] = [];
  for (const t of edges.get(w) ?? []) {
    via.set(t, null);
    queue.push(t);
  }
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i];
    if (node === home) {
      const path: HeldWait[] = [];
      for (let step = via.get(node); step; step = via.get(step.from)) path.unshift(step.wait);
      return path;
    }
    for (const next of byNode.get(node) ?? []) {
      for (const t of edges.get(next) ?? []) {
        if (via.has(t)) continue;
        via.set(t, { from: node, wait: next });
        queue.push(t);
      }
    }
  }
  return undefined;
}

/** True while every step of `cycle` still waits for its lock and the next step's (session, owner) still blocks it. */
export function cycleStillHolds(cycle: readonly HeldWait[], states: ReadonlyMap<string, LockState>): boolean {
  return cycle.every((w, i) => edgesOf(w, states.get(w.name)).includes(nodeOf(cycle[(i + 1) % cycle.length])));
}
