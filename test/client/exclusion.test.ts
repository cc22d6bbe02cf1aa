import { expect } from "chai";
import { TurnstileClient } from "../../client/index.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

describe("mutual exclusion under contention", () => {
  let redis: TestRedis;
  let coords: TestCoordinator[];

  before(async () => {
    redis = await startRedis();
    coords = [await startCoordinator(redis.url), await startCoordinator(redis.url)];
  });
  after(async () => {
    for (const c of coords) await c.stop();
    await redis.stop();
  });

  it("never has two holders across 20 sessions × 50 cycles on two coordinators, and tokens strictly increase", async function () {
    this.timeout(120_000);
    const sessions = 20;
    const cycles = 50;
    const clients = Array.from(
      { length: sessions },
      (_, i) => new TurnstileClient(coords[i % 2].address, { ttlMs: 10_000 }),
    );
    let inside = 0;
    let maxInside = 0;
    const tokens: bigint[] = [];
    try {
      await Promise.all(
        clients.map(async (client) => {
          for (let i = 0; i < cycles; i++) {
            const lock = await client.acquire("exclusion/one");
            inside++;
            maxInside = Math.max(maxInside, inside);
            tokens.push(lock.fencingToken);
            // Yield to the event loop while "inside", so overlapping holders would be seen.
            await new Promise((resolve) => setImmediate(resolve));
            expect(lock.signal.aborted).to.equal(false);
            inside--;
            await lock.release();
          }
        }),
      );
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    expect(maxInside).to.equal(1);
    expect(tokens).to.have.length(sessions * cycles);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i] > tokens[i - 1], `token ${i}`).to.equal(true);
  });
});
