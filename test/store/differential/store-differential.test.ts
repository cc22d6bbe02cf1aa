import { readFileSync } from "node:fs";
import { expect } from "chai";
import type { Redis } from "ioredis";
import { Redis as RedisClient } from "ioredis";
import { MemoryStore } from "../../../server/store/memory/memory-store.js";
import type { Claim, ReleaseOutcome } from "../../../server/store/store.js";
import { startRedis, type TestRedis } from "../../harness/redis-server.js";
import { DifferentialRunner, type Divergence } from "./differential-runner.js";
import { generateSequence } from "./operation-generator.js";
import { SeededRandom } from "./seeded-random.js";
import { shrinkSequence } from "./sequence-shrinker.js";
import { formatOperation, type StoreOperation } from "./store-operation.js";

/**
 * Knobs (docs/architecture.md, Testing): TURNSTILE_DIFF_MS how long to generate sequences (default 3000),
 * TURNSTILE_DIFF_SEED the seed to replay (default: a new one each run, printed), TURNSTILE_DIFF_STEPS the
 * length of each sequence (default 40), TURNSTILE_DIFF_REPLAY a file holding a printed sequence (a JSON
 * array) to run alone instead.
 */
const BUDGET_MS = Number(process.env.TURNSTILE_DIFF_MS ?? 3000);
const SEED = Number(process.env.TURNSTILE_DIFF_SEED ?? Math.floor(Math.random() * 4_294_967_296));
const STEPS = Number(process.env.TURNSTILE_DIFF_STEPS ?? 40);
const REPLAY = process.env.TURNSTILE_DIFF_REPLAY;
/** Room for shrinking a failure (each candidate runs on fresh stores) on top of the budget. */
const SHRINK_ALLOWANCE_MS = 180_000;

/** A divergence as the failure prints it: the shrunk sequence (a JSON array, for TURNSTILE_DIFF_REPLAY) and where it differs. */
function report(seed: number | string, original: number, ops: readonly StoreOperation[], d: Divergence): string {
  return [
    `the stores diverged (seed ${seed}; shrunk from ${original} to ${ops.length} steps):`,
    `[\n${ops.map((o) => `  ${formatOperation(o)}`).join(",\n")}\n]`,
    `at step ${d.step} (${formatOperation(ops[d.step])}), ${d.what}: ${d.why}`,
    `  memory: ${d.memory}`,
    `  redis:  ${d.redis}`,
  ].join("\n");
}

/** Runs sequences from `seed` until one diverges or `budgetMs` has passed; shrinks a divergence. */
async function explore(runner: DifferentialRunner, seed: number, budgetMs: number, steps: number) {
  const seeds = new SeededRandom(seed);
  const deadline = performance.now() + budgetMs;
  let sequences = 0;
  while (sequences === 0 || performance.now() < deadline) {
    const ops = generateSequence(seeds.seed(), steps);
    sequences++;
    const divergence = await runner.run(ops);
    if (divergence) {
      const failing = ops.slice(0, divergence.step + 1);
      const shrunk = await shrinkSequence(failing, async (candidate) => (await runner.run(candidate)) !== undefined);
      const last = (await runner.run(shrunk)) ?? divergence;
      return { sequences, failure: { shrunk, divergence: last, text: report(seed, failing.length, shrunk, last) } };
    }
  }
  return { sequences, failure: undefined };
}

describe("Store differential: the memory store and the Redis store on the same random sequences", () => {
  let server: TestRedis;
  let admin: Redis;

  before(async () => {
    server = await startRedis();
    admin = new RedisClient(server.url);
  });
  after(async () => {
    admin?.disconnect();
    await server?.stop();
  });

  it("answer, tell and describe every name alike after every step", async function () {
    this.timeout(BUDGET_MS + SHRINK_ALLOWANCE_MS);
    const runner = new DifferentialRunner(server.url, admin);
    if (REPLAY) {
      const ops = JSON.parse(readFileSync(REPLAY, "utf8")) as StoreOperation[];
      const divergence = await runner.run(ops);
      console.log(`      store differential: replayed ${REPLAY}, ${ops.length} steps`);
      if (divergence) expect.fail(report(REPLAY, ops.length, ops, divergence));
      return;
    }
    const { sequences, failure } = await explore(runner, SEED, BUDGET_MS, STEPS);
    console.log(
      `      store differential: seed ${SEED}, ${sequences} sequences, ${runner.steps} steps` +
        ` (${runner.runs} runs; replay with TURNSTILE_DIFF_SEED=${SEED})`,
    );
    if (failure) expect.fail(failure.text);
  });

  it("finds a store that releases one hold where all were asked, and shrinks it to a short sequence", async function () {
    this.timeout(SHRINK_ALLOWANCE_MS);
    // The checker's own check: a memory store with a planted bug must diverge from Redis, and shrink.
    class ReleasesOne extends MemoryStore {
      override release(claim: Omit<Claim, "requestId">, _all: boolean): Promise<ReleaseOutcome> {
        return super.release(claim, false);
      }
    }
    const runner = new DifferentialRunner(server.url, admin, (clock) => new ReleasesOne({ clock }));
    const { failure } = await explore(runner, 1, 60_000, STEPS);
    expect(failure, "the planted bug was not found").to.not.equal(undefined);
    const { shrunk, divergence } = failure!;
    // At least: an acquire, a re-entry of the same (session, owner), and the release of all holds.
    expect(shrunk.length, failure!.text).to.be.within(3, 5);
    expect(shrunk[divergence.step], failure!.text).to.include({ op: "release", all: true });
  });
});
