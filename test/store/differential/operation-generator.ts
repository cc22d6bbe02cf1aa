import type { StoreMode } from "../../../server/store/store.js";
import { SeededRandom } from "./seeded-random.js";
import type { ClaimRef, StoreOperation } from "./store-operation.js";

/**
 * Every duration a sequence uses is a whole number of quanta, and every `advance` a whole number of
 * quanta plus SKEW_MS. So when a lease, lock-delay or record is compared with the clock, the two are
 * always at least SKEW_MS apart (at most MAX_ADVANCES skews in a sequence stay under half a quantum),
 * far more than the few ms by which the two stores read the clock differently (the memory store reads
 * Redis's TIME sampled just before the step; a script reads it while it runs). Nothing ends between
 * two advances, however slow the machine is, unless a sequence runs for seconds of real time.
 */
export const QUANTUM_MS = 10_000;
export const SKEW_MS = 250;
export const MAX_ADVANCES = 8;

/** The lock names of every sequence; the last has the characters lock keys escape. */
export const NAMES = ["a", "b", "c", "d%{}"] as const;
const SESSIONS = ["s1", "s2", "s3"] as const;
const OWNERS = ["o1", "o2"] as const;

const WEIGHTS = {
  acquire: 24,
  acquireSet: 8,
  release: 12,
  withdraw: 8,
  check: 8,
  renew: 8,
  revoke: 5,
  proclaim: 4,
  transfer: 6,
  requestRelease: 3,
  advance: 7,
  saveSession: 3,
  loadSession: 3,
  touchSession: 2,
  deleteSession: 1,
  list: 3,
} as const;

/** A claim an earlier step made, on the names it made it on. */
interface Made {
  names: string[];
  claim: ClaimRef;
  op: StoreOperation;
}

/**
 * Generates one sequence of `length` operations from `seed`: acquires (exclusive and shared with
 * limits, so read-write mixes and semaphores; try-once or queueing; with and without lock-delay;
 * re-runs of an earlier request), acquire-sets, releases, withdrawals (cancel and abandon), checks,
 * renewals (which also end leases early or push them), revokes, proclaims, transfers (to a named waiter
 * or the head; re-runs by an earlier token), release requests, queue priorities, clock advances and the
 * session-record calls a resume makes, and listings. Later steps mostly name claims earlier steps made.
 */
export function generateSequence(seed: number, length: number): StoreOperation[] {
  const random = new SeededRandom(seed);
  const made: Made[] = [];
  const ops: StoreOperation[] = [];
  let requests = 0;
  let advances = 0;

  const quanta = (most: number) => QUANTUM_MS * (1 + random.below(most));
  const lockDelay = () => (random.chance(0.3) ? quanta(2) : undefined);
  const mode = (): { mode: StoreMode; limit: number } =>
    random.chance(0.45) ? { mode: "shared", limit: random.below(4) } : { mode: "exclusive", limit: 0 };
  const fresh = (sessionId = random.pick(SESSIONS)): ClaimRef => [sessionId, random.pick(OWNERS), `r${++requests}`];
  const earlier = (name?: string): Made | undefined => {
    const on = name ? made.filter((m) => m.names.includes(name)) : made;
    return on.length > 0 ? random.pick(on) : undefined;
  };

  while (ops.length < length) {
    let kind = random.weighted(WEIGHTS);
    if (kind === "advance" && advances >= MAX_ADVANCES) kind = "check";
    const name = random.pick(NAMES);
    const sessionId = random.pick(SESSIONS);
    switch (kind) {
      case "acquire":
      case "acquireSet": {
        // A re-run repeats an earlier acquire exactly, as a client's retry of the same request does
        // (a request id is never reused for another claim: the stores are idempotent by it).
        const rerun = random.chance(0.12) ? earlier() : undefined;
        if (rerun) {
          ops.push(rerun.op);
          break;
        }
        const claim = fresh();
        const ttlMs = quanta(3);
        let o: StoreOperation;
        if (kind === "acquire") {
          const [value, mayWait] = [`v${requests}`, random.chance(0.75)];
          const priority = random.chance(0.3) ? 1 + random.below(3) : undefined;
          o = { op: "acquire", name, claim, ttlMs, ...mode(), mayWait, lockDelayMs: lockDelay(), priority, value };
        } else {
          const names = NAMES.filter(() => random.chance(0.5));
          if (names.length === 0) names.push(name);
          o = {
            op: "acquireSet",
            names,
            claim,
            ttlMs,
            ...mode(),
            mayWait: random.chance(0.8),
            lockDelayMs: lockDelay(),
          };
        }
        made.push({ names: o.op === "acquire" ? [name] : o.names, claim, op: o });
        ops.push(o);
        break;
      }
      case "release": {
        const hold = earlier(name)?.claim ?? fresh(sessionId);
        ops.push({ op: "release", name, sessionId: hold[0], owner: hold[1], all: random.chance(0.3) });
        break;
      }
      case "withdraw":
        ops.push({
          op: "withdraw",
          name,
          claim: earlier(name)?.claim ?? fresh(),
          how: random.chance(0.6) ? "cancel" : "abandon",
        });
        break;
      case "check": {
        const waiters = made.filter((m) => m.names.includes(name) && random.chance(0.5)).map((m) => m.claim);
        ops.push({ op: "check", name, waiters });
        break;
      }
      case "renew": {
        const mine = made.filter((m) => m.claim[0] === sessionId);
        const locks = NAMES.filter(() => random.chance(0.6)).map((lock) => ({
          name: lock,
          owners: OWNERS.filter(() => random.chance(0.5)),
          waiters: mine
            .filter((m) => m.names.includes(lock) && random.chance(0.6))
            .map((m): [string, string] => [m.claim[1], m.claim[2]]),
        }));
        ops.push({ op: "renew", sessionId, ttlMs: quanta(3), locks, touchSession: random.chance(0.3) });
        break;
      }
      case "revoke": {
        const hold = earlier(name)?.claim ?? fresh(sessionId);
        ops.push({ op: "revoke", name, sessionId: hold[0], owner: hold[1] });
        break;
      }
      case "proclaim": {
        const hold = earlier(name)?.claim ?? fresh(sessionId);
        ops.push({ op: "proclaim", name, sessionId: hold[0], owner: hold[1], value: `p${ops.length}` });
        break;
      }
      case "transfer": {
        const hold = earlier(name)?.claim ?? fresh(sessionId);
        const to = random.chance(0.4) ? undefined : (earlier(name)?.claim ?? fresh());
        ops.push({
          op: "transfer",
          name,
          sessionId: hold[0],
          owner: hold[1],
          token: String(1 + random.below(6)),
          toSessionId: to?.[0] ?? "",
          toOwner: to && random.chance(0.7) ? to[1] : "",
        });
        break;
      }
      case "requestRelease":
        ops.push({ op: "requestRelease", name, requester: `session ${sessionId}`, reason: `why ${ops.length}` });
        break;
      case "advance":
        advances++;
        ops.push({ op: "advance", ms: QUANTUM_MS * random.below(4) + SKEW_MS });
        break;
      case "saveSession":
        ops.push({ op: "saveSession", sessionId, ttlMs: quanta(3) });
        break;
      case "loadSession":
        ops.push({ op: "loadSession", sessionId });
        break;
      case "touchSession":
        ops.push({ op: "touchSession", sessionId, ttlMs: quanta(3) });
        break;
      case "deleteSession":
        ops.push({ op: "deleteSession", sessionId });
        break;
      case "list":
        ops.push({ op: "list", prefix: random.pick(["", "a", "d%"]), pageSize: 1 + random.below(4) });
        break;
    }
  }
  return ops;
}
