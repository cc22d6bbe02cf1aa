import { once } from "node:events";
import { expect } from "chai";
import { LostLockError, TurnstileClient, TurnstileError } from "../../client/index.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator } from "../harness/test-coordinator.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

describe("coordinator shutdown with no other coordinator", () => {
  let redis: TestRedis;

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis.stop();
  });

  it("keeps reconnecting, loses held locks at their local lease deadline ('lease-unconfirmed'), then expires the session and rejects pending acquires with 'connection'", async () => {
    const ttlMs = 2000;
    const coord = await startCoordinator(redis.url);
    const holder = new TurnstileClient(coord.address, { ttlMs });
    const waiter = new TurnstileClient(coord.address, { ttlMs });
    const events: string[] = [];
    for (const type of ["connected", "reconnecting", "resumed", "expired", "ended"] as const) {
      holder.on(type, () => events.push(type));
    }
    try {
      const lock = await holder.acquire("shutdown/one");
      const pending = waiter.acquire("shutdown/one").catch((e) => e);
      await waitForQueue(redis.url, "shutdown/one", 1);
      const lost = new Promise((resolve) =>
        lock.signal.addEventListener("abort", () => resolve(lock.signal.reason), { once: true }),
      );
      const reconnecting = once(holder, "reconnecting");
      const expired = once(holder, "expired");
      await coord.stop();
      await reconnecting;
      expect([holder.state, lock.lost]).to.deep.equal(["reconnecting", false]);

      const reason = await lost;
      expect(reason).to.be.instanceOf(LostLockError);
      expect((reason as LostLockError).lostReason).to.equal("lease-unconfirmed");

      const [event] = await expired;
      expect(event.error).to.be.instanceOf(TurnstileError);
      expect([event.error.reason, holder.state]).to.deep.equal(["connection", "expired"]);
      expect(event.error.message).to.match(/no coordinator answered within the session's lease/);
      const err = await pending;
      expect(err).to.be.instanceOf(TurnstileError);
      expect(err.reason).to.equal("connection");
      expect(events).to.deep.equal(["connected", "reconnecting", "expired"]);
    } finally {
      await holder.close().catch(() => {});
      await waiter.close().catch(() => {});
    }
  });
});
