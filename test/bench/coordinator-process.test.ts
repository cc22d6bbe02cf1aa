import { expect } from "chai";
import { type BenchCoordinator, startCoordinator } from "../../bench/env/coordinator-process.js";
import { TurnstileClient } from "../../client/index.js";

describe("startCoordinator()", () => {
  let coordinator: BenchCoordinator | undefined;
  let client: TurnstileClient | undefined;

  afterEach(async () => {
    await client?.close();
    await coordinator?.stop();
  });

  it("runs the coordinator on its embedded store when given no Redis URL", async () => {
    coordinator = await startCoordinator(undefined);
    expect(coordinator.address).to.match(/^127\.0\.0\.1:\d+$/);
    client = new TurnstileClient(coordinator.address, { clientName: "bench-test" });
    await client.connect();
    const lock = await client.acquire("bench-embedded");
    await lock.release();
  });

  it("stops the coordinator process when asked", async () => {
    coordinator = await startCoordinator(undefined);
    const child = coordinator.process;
    await coordinator.stop();
    expect(child.exitCode !== null || child.signalCode !== null).to.equal(true);
  });
});
