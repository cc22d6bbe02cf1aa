import { once } from "node:events";
import { expect } from "chai";
import { TurnstileClient, TurnstileError } from "../../client/index.js";
import { type CoordinatorProcess, spawnCoordinatorWith } from "../harness/coordinator-process.js";
import { freePort } from "../harness/free-port.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";

/** Every promise's outcome; rejects when one is still pending after `watchdogMs`. */
async function allSettledWithin(work: Promise<unknown>[], watchdogMs: number): Promise<unknown[]> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${watchdogMs} ms`)), watchdogMs);
  });
  try {
    return await Promise.race([Promise.all(work), hung]);
  } finally {
    clearTimeout(timer);
  }
}

// One-shot requests (requestRelease, Lock.transfer, Leadership.handOver and .proclaim) are not re-sent
// by a resume: one issued while the session reconnects must not wait forever for an answer to a
// message that was never sent (docs/architecture.md: they reject with 'connection').
describe("one-shot requests while the session reconnects (a coordinator process SIGKILLed and restarted)", function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let coordinator: CoordinatorProcess;
  let client: TurnstileClient | undefined;
  let port: number;
  const serve = async () => {
    coordinator = await spawnCoordinatorWith(["--redis", redis.url, "--listen", `127.0.0.1:${port}`]);
    coordinator.process.stdout?.resume();
    coordinator.process.stderr?.resume();
  };

  before(async () => {
    redis = await startRedis();
    port = await freePort();
    await serve();
  });
  after(async () => {
    await client?.close().catch(() => {});
    await coordinator.kill();
    await redis.stop();
  });

  it("settles every one-shot issued during the outage with 'connection', and the resumed session answers the next", async () => {
    client = new TurnstileClient(`127.0.0.1:${port}`, { ttlMs: 15_000 });
    const c = client;
    const lock = await c.acquire("one-shot/lock");
    const leadership = await c.election("one-shot/election").campaign("v1");
    // Each outcome is taken at once: "resolved", or the error it rejected with.
    const issue = () =>
      [
        c.requestRelease("one-shot/lock", { reason: "during the outage" }),
        lock.transfer(),
        leadership.handOver(),
        leadership.proclaim("v2"),
      ].map((request) =>
        request.then(
          () => "resolved",
          (error: unknown) => error,
        ),
      );

    const reconnecting = once(c, "reconnecting", { signal: AbortSignal.timeout(15_000) });
    await coordinator.kill();
    await reconnecting;
    const pending: Promise<unknown>[] = issue();
    const resumed = once(c, "resumed", { signal: AbortSignal.timeout(30_000) });
    await serve();
    // The coordinator listens again; the client may not have reconnected yet.
    if (c.state === "reconnecting") pending.push(...issue());
    await resumed;

    const outcomes = await allSettledWithin(pending, 5000);
    expect(outcomes.length).to.be.at.least(4);
    for (const outcome of outcomes) {
      expect(outcome).to.be.instanceOf(TurnstileError);
      expect((outcome as TurnstileError).reason).to.equal("connection");
    }
    expect([lock.lost, leadership.lock.lost]).to.deep.equal([false, false]);
    expect(await c.requestRelease("one-shot/lock", { reason: "after the resume" })).to.equal(1);
  });
});
