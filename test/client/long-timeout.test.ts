import { expect } from "chai";
import { TurnstileClient } from "../../client/index.js";
import { ANSWER_GRACE_MS } from "../../client/session/requests/acquire-deadlines.js";
import { MAX_TIMER_MS } from "../../wire/max-timer-ms.js";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";

const DAY_MS = 24 * 3600 * 1000;

// setTimeout fires at once (after 1 ms, with a TimeoutOverflowWarning) for a delay above 2^31-1 ms,
// about 24.8 days: a user's duration past that must still mean "that long", not "now". The
// coordinator is a process of its own, so the warnings seen here are the client's.
describe("durations past setTimeout's limit (2^31-1 ms)", function () {
  this.timeout(30_000);
  let redis: TestRedis;
  let coordinator: CoordinatorProcess;
  let address: string;
  const clients: TurnstileClient[] = [];
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);

  before(async () => {
    redis = await startRedis();
    // The default --max-wait is 1 day; this coordinator takes the longest wait it can time, 2^31-1 ms.
    coordinator = await spawnCoordinator(redis.url, ["--max-wait", `${MAX_TIMER_MS}ms`]);
    coordinator.process.stdout?.resume();
    coordinator.process.stderr?.resume();
    address = coordinator.address;
  });
  after(async () => {
    await coordinator?.kill();
    await redis?.stop();
  });
  beforeEach(() => {
    warnings.length = 0;
    process.on("warning", onWarning);
  });
  afterEach(async () => {
    process.off("warning", onWarning);
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  /** The warnings emitted so far: a warning is delivered on the next turn, so let one pass first. */
  async function overflowWarnings(): Promise<string[]> {
    await new Promise((resolve) => setImmediate(resolve));
    return warnings.filter((w) => w.startsWith("TimeoutOverflowWarning"));
  }

  it("grants a new client's first acquire whose wait (plus the answer grace) passes 2^31-1 ms, with no TimeoutOverflowWarning", async () => {
    // The session is not open yet: the client times the open by the wait plus ANSWER_GRACE_MS.
    const waitMs = MAX_TIMER_MS;
    expect(waitMs + ANSWER_GRACE_MS).to.be.greaterThan(MAX_TIMER_MS);
    const client = new TurnstileClient(address);
    clients.push(client);
    const lock = await client.acquire("long/wait", { waitMs });
    expect(lock.lost).to.equal(false);
    await lock.release();
    expect(await overflowWarnings()).to.deep.equal([]);
  });

  it("opens and grants with an openTimeoutMs of 30 days, with no TimeoutOverflowWarning", async () => {
    const client = new TurnstileClient(address, { openTimeoutMs: 30 * DAY_MS });
    clients.push(client);
    const lock = await client.acquire("long/open-timeout");
    expect(client.state).to.equal("connected");
    await lock.release();
    expect(await overflowWarnings()).to.deep.equal([]);
  });
});
