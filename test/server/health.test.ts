import { expect } from "chai";
import { pino } from "pino";
import { Coordinator } from "../../server/coordinator.js";
import { MemoryStore } from "../../server/store/memory/memory-store.js";
import { HealthClient } from "../harness/health-client.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

describe("health checking (grpc.health.v1)", () => {
  describe("on Redis", () => {
    let redis: TestRedis;
    let coord: TestCoordinator;
    let health: HealthClient;

    before(async () => {
      redis = await startRedis();
      coord = await startCoordinator(redis.url);
      health = new HealthClient(coord.address);
    });
    after(async () => {
      health.close();
      await coord.stop();
      await redis.stop();
    });

    it("answers SERVING for the server and for turnstile.v1.LockService, and NOT_FOUND for other services", async () => {
      expect(await health.check("")).to.equal("SERVING");
      expect(await health.check("turnstile.v1.LockService")).to.equal("SERVING");
      const unknown = await health.check("no.such.Service").catch((err) => err.code);
      expect(unknown).to.equal(5);
    });

    it("turns NOT_SERVING while Redis is down and SERVING again once it is back", async () => {
      const watched = health.watch("turnstile.v1.LockService");
      await watched("SERVING");
      const { port } = redis;
      await redis.stop();
      await watched("NOT_SERVING");
      expect(await health.check("")).to.equal("NOT_SERVING");
      redis = await startRedis({ port });
      await watched("SERVING");
      expect(await health.check("")).to.equal("SERVING");
    });
  });

  describe("on the embedded store", () => {
    it("answers SERVING while running and NOT_SERVING once shutdown has begun", async () => {
      const coordinator = new Coordinator({
        store: new MemoryStore(),
        log: pino({ level: "silent" }),
        listen: "127.0.0.1:0",
        shutdownGraceMs: 200,
      });
      const port = await coordinator.start();
      const health = new HealthClient(`127.0.0.1:${port}`);
      try {
        const watched = health.watch("");
        await watched("SERVING");
        const stopping = coordinator.stop();
        await watched("NOT_SERVING");
        await stopping;
      } finally {
        health.close();
      }
    });
  });
});
