import { readFileSync } from "node:fs";
import { expect } from "chai";
import { DEFAULT_BACKOFF } from "../../client/connection/backoff.js";
import { BACKOFF_MS } from "../../client/election/election.js";
import { LeaseClock } from "../../client/locks/lease-clock.js";
import { ANSWER_GRACE_MS } from "../../client/session/requests/acquire-deadlines.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { runScenario } from "./scenario-driver.js";
import { CONSTANTS_FILE, loadScenarios } from "./scenario-files.js";

// The TypeScript driver of the shared client conformance suite (test/conformance/README.md): every
// scenario file runs against the TypeScript client, a real coordinator and a real redis-server, as
// the Go (clients/go/conformance_test.go) and Java (ConformanceTest.java) drivers run the same files.

interface SharedConstants {
  leaseMargin: { capMs: number; ttlDivisor: number; examples: { ttlMs: number; marginMs: number }[] };
  answerGraceMs: number;
  resumeBackoff: { firstMs: number; maxMs: number };
  watchBackoff: { firstMs: number; maxMs: number };
  divergences: Record<string, Record<string, number>>;
}

describe("client conformance (TypeScript driver)", () => {
  describe("shared constants (test/conformance/constants.json)", () => {
    const shared = JSON.parse(readFileSync(CONSTANTS_FILE, "utf8")) as SharedConstants;

    it("the client's lease margin, answer grace and backoffs are the shared ones", () => {
      const margins = shared.leaseMargin.examples.map(({ ttlMs }) => new LeaseClock({ ttlMs }).safetyMarginMs);
      const own: Record<string, number> = {
        "leaseMargin.capMs": new LeaseClock({ ttlMs: 3_600_000 }).safetyMarginMs,
        answerGraceMs: ANSWER_GRACE_MS,
        "resumeBackoff.firstMs": DEFAULT_BACKOFF.baseMs,
        "resumeBackoff.maxMs": DEFAULT_BACKOFF.maxMs,
        "watchBackoff.firstMs": BACKOFF_MS.first,
        "watchBackoff.maxMs": BACKOFF_MS.max,
      };
      expect(margins, "lease margins of the examples").to.deep.equal(
        shared.leaseMargin.examples.map((e) => e.marginMs),
      );
      expect(own).to.deep.equal(expectedFor(shared, "typescript", Object.keys(own)));
    });
  });

  describe("scenarios (test/conformance/scenarios)", () => {
    let redis: TestRedis;
    let main: TestCoordinator;

    before(async () => {
      redis = await startRedis();
      main = await startCoordinator(redis.url);
    });
    after(async () => {
      await main?.stop();
      await redis?.stop();
    });

    for (const scenario of loadScenarios()) {
      it(`${scenario.id}: ${scenario.title}`, async function () {
        this.timeout(90_000);
        await runScenario(scenario, { redisUrl: redis.url, mainAddress: main.address });
      });
    }
  });
});

/** The values `language` must have: the shared ones, with its listed divergences in their place. */
function expectedFor(shared: SharedConstants, language: string, keys: string[]): Record<string, number> {
  const divergences = shared.divergences[language] ?? {};
  const value = (key: string): number => {
    if (key in divergences) return divergences[key];
    const [group, field] = key.split(".");
    const found =
      field === undefined
        ? shared[group as "answerGraceMs"]
        : (shared as unknown as Record<string, Record<string, number>>)[group][field];
    return found;
  };
  return Object.fromEntries(keys.map((key) => [key, value(key)]));
}
