import { getEventListeners } from "node:events";
import { expect } from "chai";
import { TurnstileClient, TurnstileError } from "../../client/index.js";
import { ANSWER_GRACE_MS } from "../../client/session/requests/acquire-deadlines.js";
import { DEFAULT_OPEN_TIMEOUT_MS } from "../../client/session/session-link.js";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { SilentServer } from "../harness/silent-server.js";

/** Slack on top of each bound: timers, a cancelled call's status, one backoff delay (≤ 2 s capped, jittered) at most. */
const SLACK_MS = 700;

/** How a promise ended: its error (undefined if it resolved) and after how many ms; rejects past `watchdogMs`. */
async function ending(work: Promise<unknown>, watchdogMs: number): Promise<{ error: TurnstileError; ms: number }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${watchdogMs} ms`)), watchdogMs);
  });
  try {
    const error = await Promise.race([
      work.then(
        () => undefined,
        (e: unknown) => e,
      ),
      hung,
    ]);
    expect(error, "it rejected").to.be.instanceOf(TurnstileError);
    return { error: error as TurnstileError, ms: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

// A coordinator that accepts TCP and never answers: a port that accepts and says nothing, and a real
// `turnstile serve` SIGSTOPped. A first open and an acquire end within the documented bound
// (README, *Connection*): the open timeout per address, or the wait plus ANSWER_GRACE_MS.
describe("a coordinator that accepts and never answers", function () {
  this.timeout(30_000);
  let silent: SilentServer;
  const clients: TurnstileClient[] = [];
  const client = (address: string | string[], options: ConstructorParameters<typeof TurnstileClient>[1] = {}) => {
    const c = new TurnstileClient(address, options);
    clients.push(c);
    return c;
  };

  beforeEach(async () => {
    silent = await SilentServer.start();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close({ signal: AbortSignal.timeout(3000) }).catch(() => {})));
    await silent.stop();
  });

  it("a first acquire (no wait given) rejects 'connection' naming the address within the default open timeout", async () => {
    const c = client(silent.address);
    const { error, ms } = await ending(c.acquire("silent/first"), DEFAULT_OPEN_TIMEOUT_MS * 3);
    expect(error.reason).to.equal("connection");
    expect(error.message).to.include(`${silent.address} did not answer the session's open within 5000 ms`);
    expect(ms).to.be.within(DEFAULT_OPEN_TIMEOUT_MS - 100, DEFAULT_OPEN_TIMEOUT_MS + SLACK_MS);
    expect(silent.accepted, "the port took the connection").to.be.greaterThan(0);
  });

  it("connect() over two silent addresses tries each once and rejects 'connection' within 2 × openTimeoutMs", async () => {
    const other = await SilentServer.start();
    try {
      const c = client([silent.address, other.address], { openTimeoutMs: 800, backoff: { maxMs: 100 } });
      const { error, ms } = await ending(c.connect(), 10_000);
      expect(error.reason).to.equal("connection");
      expect(error.message).to.include(`${other.address} did not answer`);
      expect(ms).to.be.within(1600 - 100, 1600 + SLACK_MS);
      expect([silent.accepted, other.accepted]).to.deep.equal([1, 1]);
      expect(c.state).to.equal("idle");
    } finally {
      await other.stop();
    }
  });

  it("a first acquire with waitMs rejects 'connection' by its wait plus ANSWER_GRACE_MS, naming the address, nothing sent", async () => {
    const c = client(silent.address, { openTimeoutMs: 60_000 });
    const { error, ms } = await ending(c.acquire("silent/wait", { waitMs: 500 }), 10_000);
    expect(error.reason).to.equal("connection");
    expect(error.message).to.equal(
      `"silent/wait": no coordinator answered the session's open within acquire.wait of 500 ms + ${ANSWER_GRACE_MS} ms (waiting for ${silent.address}); nothing was sent`,
    );
    expect(ms).to.be.within(500 + ANSWER_GRACE_MS - 50, 500 + ANSWER_GRACE_MS + SLACK_MS);
  });

  it("a first acquire that gives up while the session opens leaves no abort listener on the caller's signal", async () => {
    const c = client(silent.address, { openTimeoutMs: 60_000 });
    // One signal reused across calls, as an application's shutdown signal is.
    const { signal } = new AbortController();
    for (let i = 0; i < 3; i += 1) {
      const { error } = await ending(c.acquire(`silent/listener-${i}`, { signal, waitMs: 0 }), 10_000);
      expect(error.reason).to.equal("connection");
      expect(c.state, "the open still waits").to.equal("connecting");
      expect(getEventListeners(signal, "abort"), `after call ${i}`).to.have.length(0);
    }
  });
});

describe("a SIGSTOPped coordinator", function () {
  this.timeout(30_000);
  let redis: TestRedis;
  let coordinator: CoordinatorProcess;
  const clients: TurnstileClient[] = [];

  before(async () => {
    redis = await startRedis();
  });
  beforeEach(async () => {
    coordinator = await spawnCoordinator(redis.url);
    coordinator.process.stdout?.resume();
    coordinator.process.stderr?.resume();
  });
  afterEach(async () => {
    await coordinator.kill();
    await Promise.all(clients.splice(0).map((c) => c.close({ signal: AbortSignal.timeout(3000) }).catch(() => {})));
  });
  after(async () => {
    await redis.stop();
  });

  it("a first open rejects 'connection' within openTimeoutMs, naming the stopped coordinator", async () => {
    coordinator.process.kill("SIGSTOP");
    const c = new TurnstileClient(coordinator.address, { openTimeoutMs: 1000 });
    clients.push(c);
    const { error, ms } = await ending(c.acquire("stopped/first"), 10_000);
    expect([error.reason, error.message]).to.deep.equal([
      "connection",
      `${coordinator.address} did not answer the session's open within 1000 ms (coordinator stopped, blackholed, or not a Turnstile coordinator)`,
    ]);
    expect(ms).to.be.within(900, 1000 + SLACK_MS);
  });

  it("an acquire with waitMs on an open session whose coordinator stopped rejects 'timeout' by its wait plus ANSWER_GRACE_MS", async () => {
    const c = new TurnstileClient(coordinator.address, { openTimeoutMs: 1000 });
    clients.push(c);
    await c.connect();
    coordinator.process.kill("SIGSTOP");
    const { error, ms } = await ending(c.acquire("stopped/open", { waitMs: 500 }), 10_000);
    expect(error.reason).to.equal("timeout");
    expect(error.message).to.include("no answer within acquire.wait of 500 ms");
    expect(ms).to.be.within(500 + ANSWER_GRACE_MS - 50, 500 + ANSWER_GRACE_MS + SLACK_MS);
  });
});
