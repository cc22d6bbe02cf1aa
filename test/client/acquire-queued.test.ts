import { expect } from "chai";
import { TurnstileClient } from "../../client/index.js";
import type { Coordinator } from "../../server/coordinator.js";
import { startEmbeddedCoordinator } from "../harness/embedded-coordinator.js";

// acquire's onQueued: told the position of each `queued` answer, never for a grant at once.
describe("acquire({ onQueued })", () => {
  let coordinator: Coordinator;
  let address: string;

  before(async () => {
    ({ coordinator, address } = await startEmbeddedCoordinator());
  });
  after(() => coordinator.stop());

  it("is called with the queue position when the lock is held, and not when it is granted at once", async () => {
    const holder = new TurnstileClient(address);
    const waiter = new TurnstileClient(address);
    try {
      const told: number[] = [];
      const first = await holder.acquire("queued/x", { onQueued: (p) => told.push(p) });
      expect(told).to.deep.equal([]);
      let queued!: () => void;
      const wasQueued = new Promise<void>((resolve) => {
        queued = resolve;
      });
      const second = waiter.acquire("queued/x", {
        onQueued: (p) => {
          told.push(p);
          queued();
        },
      });
      await wasQueued;
      expect(told).to.deep.equal([1]);
      await first.release();
      await (await second).release();
      expect(told).to.deep.equal([1]);
    } finally {
      await holder.close();
      await waiter.close();
    }
  });
});
