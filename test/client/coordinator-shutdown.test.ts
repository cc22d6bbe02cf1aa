import { expect } from "chai";
import { LostLockError, TurnstileClient, TurnstileError } from "../../client/index.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator } from "../harness/test-coordinator.js";

describe("coordinator shutdown", () => {
  let redis: TestRedis;

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis.stop();
  });

  it("marks held locks lost ('session-ended') and rejects pending acquires with 'connection'", async () => {
    const coord = await startCoordinator(redis.url);
    const holder = new TurnstileClient(coord.address);
    const waiter = new TurnstileClient(coord.address);
    try {
      const lock = await holder.acquire("shutdown/one");
      const pending = waiter.acquire("shutdown/one").catch((e) => e);
      const lost = new Promise((resolve) =>
        lock.signal.addEventListener("abort", () => resolve(lock.signal.reason), { once: true }),
      );
      await coord.stop();
      const reason = await lost;
      expect(reason).to.be.instanceOf(LostLockError);
      expect((reason as LostLockError).lostReason).to.equal("session-ended");
      const err = await pending;
      expect(err).to.be.instanceOf(TurnstileError);
      expect(err.reason).to.equal("connection");
    } finally {
      await holder.close().catch(() => {});
      await waiter.close().catch(() => {});
    }
  });
});
