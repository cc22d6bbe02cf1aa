import type { Mark } from "./marks.js";

/** Where one step of a chain is found, given the marks matched so far. */
interface Step {
  /** The leg that ends at this step, as the report names it. */
  leg: string;
  event: string;
  /** "same": this session and request id; "session": this session, the first at or after the previous step; "any": any session. */
  match: "same" | "session" | "any";
  /** For "any" steps: the lock must be the chain's lock (the grant of a hand-off). */
  sameName?: boolean;
  /** This step's session and request become the chain's (the waiter a hand-off grants). */
  adopt?: boolean;
  /** Optional: when no mark is found the leg is left out of this chain (not the whole chain). */
  optional?: boolean;
}

/** How one kind of operation is followed through the marks, from its first client mark. */
export interface Chain {
  /** The client event that starts it, e.g. "release-called". */
  start: string;
  steps: Step[];
}

/**
 * A hand-off: holder A releases, the coordinator's release script grants the head waiter B, and
 * B's acquire resolves. Legs are timed on the one monotonic clock across the client and coordinator processes.
 */
export const HAND_OFF: Chain = {
  start: "release-called",
  steps: [
    { leg: "client: release() called → release written", event: "sent:release", match: "session", adopt: true },
    { leg: "release written → coordinator starts decoding it", event: "decode-start:release", match: "same" },
    { leg: "decoding (protobuf + strict-wire check)", event: "decoded:release", match: "same" },
    { leg: "decoded → session stream reads it", event: "read:release", match: "same" },
    { leg: "read → admitted (admission lane)", event: "admitted", match: "same" },
    { leg: "admitted → release script sent", event: "store-sent:release", match: "session" },
    { leg: "script sent → Redis socket written (uncork)", event: "flush", match: "any", optional: true },
    { leg: "socket written → script answered", event: "store-answered:release", match: "session" },
    { leg: "answered → waiter's grant written", event: "written:acquired", match: "any", sameName: true, adopt: true },
    { leg: "grant written → waiter reads it", event: "received:acquired", match: "same" },
    { leg: "waiter reads → waiter's acquire resolves", event: "resolved", match: "session" },
  ],
};

/** An uncontended acquire: acquire() called → written → script → granted → resolved. */
export const UNCONTENDED_ACQUIRE: Chain = {
  start: "acquire-called",
  steps: [
    { leg: "client: acquire() called → acquire written", event: "sent:acquire", match: "session", adopt: true },
    { leg: "acquire written → coordinator starts decoding it", event: "decode-start:acquire", match: "same" },
    { leg: "decoding (protobuf + strict-wire check)", event: "decoded:acquire", match: "same" },
    { leg: "decoded → session stream reads it", event: "read:acquire", match: "same" },
    { leg: "read → admitted (admission lane)", event: "admitted", match: "same" },
    { leg: "admitted → acquire script sent", event: "store-sent:acquire", match: "same" },
    { leg: "script sent → Redis socket written (uncork)", event: "flush", match: "any", optional: true },
    { leg: "socket written → script answered", event: "store-answered:acquire", match: "same" },
    { leg: "answered → grant written", event: "written:acquired", match: "same" },
    { leg: "grant written → client reads it", event: "received:acquired", match: "same" },
    { leg: "client reads → acquire resolves", event: "resolved", match: "session" },
  ],
};

/** One followed operation: each leg's duration in ms (undefined where an optional step had no mark). */
export interface ChainLegs {
  startT: number;
  legsMs: (number | undefined)[];
  totalMs: number;
}

/** Marks indexed for the three kinds of lookup, each list in time order. */
class MarkIndex {
  readonly #by = new Map<string, Mark[]>();

  constructor(marks: readonly Mark[]) {
    const sorted = [...marks].sort((a, b) => a.t - b.t);
    for (const m of sorted) {
      this.#add(`${m.event}|${m.sessionId}|${m.requestId}`, m);
      this.#add(`${m.event}|${m.sessionId}`, m);
      this.#add(`${m.event}|name:${m.name}`, m);
      this.#add(m.event, m);
    }
  }

  /** The first mark under `key` at or after `t`. */
  firstAfter(key: string, t: number): Mark | undefined {
    const list = this.#by.get(key);
    if (!list) return undefined;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid].t < t) lo = mid + 1;
      else hi = mid;
    }
    return list[lo];
  }

  all(key: string): Mark[] {
    return this.#by.get(key) ?? [];
  }

  #add(key: string, m: Mark): void {
    const list = this.#by.get(key);
    if (list) list.push(m);
    else this.#by.set(key, [m]);
  }
}

/**
 * Follows every operation of `chain` through the marks of both processes (start marks from `fromT`
 * to `toT` only, to leave out the warm-up and other workloads). An operation with a required step missing is left out
 * and counted in `unmatched`.
 */
export function followChains(
  marks: readonly Mark[],
  chain: Chain,
  fromT = Number.NEGATIVE_INFINITY,
  toT = Number.POSITIVE_INFINITY,
): { chains: ChainLegs[]; unmatched: number } {
  const index = new MarkIndex(marks);
  const chains: ChainLegs[] = [];
  let unmatched = 0;
  for (const start of index.all(chain.start)) {
    if (start.t < fromT || start.t > toT) continue;
    const legs = follow(index, chain, start);
    if (legs) chains.push(legs);
    else unmatched++;
  }
  return { chains, unmatched };
}

function follow(index: MarkIndex, chain: Chain, start: Mark): ChainLegs | undefined {
  let sessionId = start.sessionId;
  let requestId = start.requestId;
  const name = start.name;
  let at = start;
  const legsMs: (number | undefined)[] = [];
  let pendingFrom = start.t;
  for (const step of chain.steps) {
    const key =
      step.match === "same"
        ? `${step.event}|${sessionId}|${requestId}`
        : step.match === "session"
          ? `${step.event}|${sessionId}`
          : step.sameName && name
            ? `${step.event}|name:${name}`
            : step.event;
    const found = index.firstAfter(key, at.t);
    // A step of another session must not be a later operation's: a grant written before the
    // waiter's acquire was even read would be another hand-off's (the chain is then broken).
    if (!found || (step.match === "any" && step.adopt && found.sessionId === start.sessionId)) {
      if (!step.optional) return undefined;
      legsMs.push(undefined);
      continue;
    }
    legsMs.push((found.t - pendingFrom) / 1e6);
    pendingFrom = found.t;
    at = found;
    if (step.adopt) {
      sessionId = found.sessionId;
      requestId = found.requestId;
    }
  }
  return { startT: start.t, legsMs, totalMs: (at.t - start.t) / 1e6 };
}
