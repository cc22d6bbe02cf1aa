import type { Redis } from "ioredis";
import { MemoryStore } from "../../../server/store/memory/memory-store.js";
import { RedisStore } from "../../../server/store/redis/redis-store.js";
import type { LockState, Store } from "../../../server/store/store.js";
import { RecordingListener } from "../../harness/recording-listener.js";
import { AnswerNormaliser, difference, type Normalised } from "./answer-normaliser.js";
import { refusedByCoordinator } from "./coordinator-rules.js";
import { NAMES, QUANTUM_MS } from "./operation-generator.js";
import { SharedClock } from "./shared-clock.js";
import { applyOperation, type StoreOperation } from "./store-operation.js";

/** The Redis store's key prefix in a differential run (the clock's advance shifts the keys under it). */
const PREFIX = "diff";

/** Where a sequence first made the two stores differ: the step, what differed and both sides. */
export interface Divergence {
  /** Index of the step in the sequence run. */
  step: number;
  /** "answer", "describe <name>", or the listener record that differed ("grants", ...). */
  what: string;
  why: string;
  memory: string;
  redis: string;
}

/** One store under test, with the listener that records what it tells, and its normaliser. */
interface Side {
  store: Store;
  listener: RecordingListener;
  normaliser: AnswerNormaliser;
  /** Listener records already compared (JSON), so a repeated grant or revocation counts once. */
  seen: Set<string>;
  /** Each name as `describe` answered after the last step. */
  states: Map<string, LockState>;
}

/**
 * Runs sequences of operations on a fresh memory store and a fresh Redis store each (Redis flushed
 * first), the memory store on the Redis store's clock (SharedClock). After every step it compares
 * the two answers, what each listener was newly told (grants, revocations, set retries; a store may
 * repeat those, so each counts once), and `describe` of every name; it stops at the first difference.
 */
export class DifferentialRunner {
  /** Sequences run and steps taken so far (shrinking included). */
  runs = 0;
  steps = 0;

  /**
   * `makeMemory` makes the in-process side from the shared clock (default: a MemoryStore on it); the
   * runner's own test passes a broken one, to show that a divergence is found and shrunk.
   */
  constructor(
    private readonly redisUrl: string,
    private readonly admin: Redis,
    private readonly makeMemory: (clock: () => number) => Store = (clock) => new MemoryStore({ clock }),
  ) {}

  /** Runs `ops` on fresh stores; answers the first divergence, or undefined when none. */
  async run(ops: readonly StoreOperation[]): Promise<Divergence | undefined> {
    this.runs++;
    await this.admin.flushall();
    const clock = new SharedClock(this.admin, PREFIX);
    const memory = await this.open(this.makeMemory(clock.read));
    const redis = await this.open(new RedisStore({ url: this.redisUrl, prefix: PREFIX }));
    const startedAt = performance.now();
    try {
      for (const [step, o] of ops.entries()) {
        // The generator's durations keep every end SKEW_MS clear of the clock only while a sequence
        // takes far less real time than a quantum: past that, a lease could end between advances.
        const tookMs = performance.now() - startedAt;
        if (tookMs > QUANTUM_MS / 2)
          throw new Error(`sequence ran ${Math.round(tookMs)} ms by step ${step}: use fewer steps`);
        this.steps++;
        const divergence = await this.step(clock, memory, redis, o);
        if (divergence) return { step, ...divergence };
      }
      return undefined;
    } finally {
      await Promise.all([memory.store.close(), redis.store.close()]);
    }
  }

  private async open(store: Store): Promise<Side> {
    const listener = new RecordingListener();
    await store.start(listener);
    return { store, listener, normaliser: new AnswerNormaliser(), seen: new Set(), states: new Map() };
  }

  private async step(
    clock: SharedClock,
    memory: Side,
    redis: Side,
    o: StoreOperation,
  ): Promise<Omit<Divergence, "step"> | undefined> {
    if (o.op === "advance") await clock.advance(o.ms);
    else if (refusedByCoordinator(o, memory.states)) {
      // Sent to neither store; the states agreed after the last step, so the refusal is the same on both.
    } else {
      await clock.sync();
      const memoryAnswer = await applyOperation(memory.store, o);
      const redisAnswer = await applyOperation(redis.store, o);
      const answer = compare(
        "answer",
        memory.normaliser.normalise(memoryAnswer),
        redis.normaliser.normalise(redisAnswer),
      );
      if (answer) return answer;
    }
    for (const record of ["grants", "revocations", "setRetries"] as const) {
      const told = compare(record, newlyTold(memory, record), newlyTold(redis, record));
      if (told) return told;
    }
    await clock.sync();
    for (const name of NAMES) {
      const [m, r] = await Promise.all([memory.store.describe(name), redis.store.describe(name)]);
      memory.states.set(name, m);
      const state = compare(`describe ${name}`, memory.normaliser.lockState(m), redis.normaliser.lockState(r));
      if (state) return state;
    }
    return undefined;
  }
}

/** What `side`'s listener recorded in `record` that it had not recorded before, each once, sorted. */
function newlyTold(side: Side, record: "grants" | "revocations" | "setRetries"): Normalised {
  const fresh: string[] = [];
  for (const entry of side.listener[record]) {
    const json = side.normaliser.normalise(entry).exact;
    const key = `${record} ${json}`;
    if (!side.seen.has(key)) fresh.push(json);
    side.seen.add(key);
  }
  return { exact: `[${fresh.sort().join(",")}]`, timesMs: [] };
}

function compare(what: string, memory: Normalised, redis: Normalised): Omit<Divergence, "step"> | undefined {
  const why = difference(memory, redis);
  if (!why) return undefined;
  const shown = (n: Normalised) => `${n.exact}${n.timesMs.length > 0 ? ` times ${n.timesMs.join(",")}` : ""}`;
  return { what, why, memory: shown(memory), redis: shown(redis) };
}
