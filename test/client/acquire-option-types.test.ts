import { expect } from "chai";
import { TurnstileClient, TurnstileError } from "../../client/index.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

/** Awaits `work`'s rejection and returns it. */
async function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => expect.fail("it resolved"),
    (e: unknown) => e,
  );
}

// Callers from plain JavaScript (or `as any`) pass wrongly typed options: each is an
// 'invalid-argument' naming the field, nothing is registered or sent, and the client still works and
// closes cleanly (no unhandled rejection from a request left behind).
describe("acquire options of the wrong type", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  let client: TurnstileClient;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
    process.on("unhandledRejection", onUnhandled);
  });
  after(async () => {
    process.off("unhandledRejection", onUnhandled);
    await coord.stop();
    await redis.stop();
  });
  beforeEach(() => {
    client = new TurnstileClient(coord.address);
  });

  const cases: [string, (c: TurnstileClient) => Promise<unknown>, string][] = [
    ["value: a string", (c) => c.acquire("types/v", { value: "hello" } as never), "value: expected a Uint8Array"],
    ["value: an array", (c) => c.acquire("types/v", { value: [1, 2] } as never), "value: expected a Uint8Array"],
    ["waitMs: a string", (c) => c.acquire("types/v", { waitMs: "5s" } as never), "waitMs: expected a number of ms"],
    ["owner: a number", (c) => c.tryAcquire("types/v", { owner: 7 } as never), "owner: expected a string"],
    ["name: a number", (c) => c.acquire(42 as never), "name: expected a string"],
    ["withLocks value", (c) => c.withLocks(["types/a"], () => 1, { value: "x" } as never), "value: expected"],
    ["acquireAll claim", (c) => c.acquireAll([{ name: 5 }] as never), "claims[].name: expected a string"],
    [
      "acquireAll limit: a string",
      (c) => c.acquireAll([{ name: "types/s", mode: "shared", limit: "z" }] as never),
      'claims[].limit of "types/s": expected an integer from 0 to 4294967295, got a string',
    ],
    [
      "acquireAll limit: past uint32",
      (c) => c.acquireAll([{ name: "types/s", mode: "shared", limit: 2 ** 32 }], { waitMs: 0 }),
      'claims[].limit of "types/s": expected an integer from 0 to 4294967295, got 4294967296',
    ],
    [
      "acquireAll mode: neither exclusive nor shared",
      (c) => c.acquireAll([{ name: "types/m", mode: "bogus" }] as never, { waitMs: 0 }),
      'claims[].mode of "types/m": expected "exclusive" or "shared", got "bogus"',
    ],
  ];
  for (const [what, call, message] of cases) {
    it(`${what}: rejects invalid-argument naming the field; the client then acquires and closes cleanly`, async () => {
      const error = await rejection(call(client));
      expect(error).to.be.instanceOf(TurnstileError);
      expect((error as TurnstileError).reason).to.equal("invalid-argument");
      expect((error as TurnstileError).message).to.include(message);
      const lock = await client.acquire("types/ok", { waitMs: 5000 });
      await lock.release();
      await client.close();
      // An unhandled rejection is reported once the microtask queue drains: two macrotask turns.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).to.deep.equal([]);
    });
  }
});
