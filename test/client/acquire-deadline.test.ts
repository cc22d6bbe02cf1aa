import { expect } from "chai";
import { Redis } from "ioredis";
import { TurnstileClient, TurnstileError } from "../../client/index.js";
import { ANSWER_GRACE_MS } from "../../client/session/requests/acquire-deadlines.js";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { TcpProxy } from "../harness/tcp-proxy.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

/** How an acquire ended: its error (undefined if it was granted) and after how many ms. */
async function ending(acquire: Promise<unknown>, watchdogMs: number): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the acquire had not ended after ${watchdogMs} ms`)), watchdogMs);
  });
  try {
    const error = await Promise.race([
      acquire.then(
        () => undefined,
        (e: unknown) => e,
      ),
      hung,
    ]);
    return { error, ms: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

const withdrawn = (name: string, waitMs: number) =>
  `"${name}": no answer within acquire.wait of ${waitMs} ms + ${ANSWER_GRACE_MS} ms (coordinator unreachable or its store stalled); the acquire was withdrawn`;

// The client's own deadline (docs/protocol.md, *The client's own deadline*) against a real
// `turnstile serve` reached through a TCP proxy that stops forwarding: no bytes, no FIN, no reset.
// The watchdogs are far above the bound (wait + ANSWER_GRACE_MS + one sweep) and far below what a
// client without its own deadline would take (it would wait until the broken link is noticed).
describe("an acquire behind a blackholed link ends by its wait plus the answer grace", function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let coordinator: CoordinatorProcess;
  let inspect: Redis;
  let proxy: TcpProxy;
  const clients: TurnstileClient[] = [];
  const client = (address: string, ttlMs = 30_000) => {
    const c = new TurnstileClient(address, { ttlMs });
    clients.push(c);
    return c;
  };
  const holders = (name: string) => inspect.zrange(lockKeys("turnstile", name)[0], "0", "-1");

  before(async () => {
    redis = await startRedis();
    coordinator = await spawnCoordinator(redis.url);
    coordinator.process.stdout?.resume();
    coordinator.process.stderr?.resume();
    inspect = new Redis(redis.url);
  });
  beforeEach(async () => {
    proxy = await TcpProxy.start(coordinator.address);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close({ signal: AbortSignal.timeout(3000) }).catch(() => {})));
    await proxy.stop();
  });
  after(async () => {
    inspect.disconnect();
    await coordinator.kill();
    await redis.stop();
  });

  it("a try-once sent into the blackhole rejects 'timeout' (withdrawn) and nothing is held", async () => {
    const a = client(proxy.address);
    await a.connect();
    proxy.freeze();
    const { error, ms } = await ending(a.acquire("deadline/void", { owner: "a", waitMs: 0 }), 8000);
    expect(error).to.be.instanceOf(TurnstileError);
    expect([(error as TurnstileError).reason, (error as TurnstileError).message]).to.deep.equal([
      "timeout",
      withdrawn("deadline/void", 0),
    ]);
    const b = client(coordinator.address);
    const lock = await b.tryAcquire("deadline/void", { owner: "b" });
    expect(lock, "the lock is free for another session").to.not.equal(null);
    expect(await holders("deadline/void")).to.deep.equal([`${b.sessionId}:b`]);
    console.log(`      try-once ended ${Math.round(ms)} ms after it was sent into the blackhole`);
  });

  it("a queued acquire whose grant is lost in the blackhole rejects 'timeout', and the lost grant lapses with the session's TTL", async () => {
    const ttlMs = 3000;
    const holder = client(coordinator.address);
    const first = await holder.acquire("deadline/queued", { owner: "holder" });
    const a = client(proxy.address, ttlMs);
    const waiting = a.acquire("deadline/queued", { owner: "a", waitMs: 2000 });
    await waitForQueue(redis.url, "deadline/queued", 1);
    proxy.freeze();
    // The grant to A is made and sent, and the proxy drops it: an outcome A cannot know.
    await first.release();
    const { error, ms } = await ending(waiting, 10_000);
    expect([(error as TurnstileError).reason, (error as TurnstileError).message]).to.deep.equal([
      "timeout",
      withdrawn("deadline/queued", 2000),
    ]);
    // A's keepalives no longer arrive, so the hold it never learned of ends with its lease.
    const c = client(coordinator.address);
    const lock = await c.acquire("deadline/queued", { owner: "c", waitMs: ttlMs * 4 });
    expect(await holders("deadline/queued")).to.deep.equal([`${c.sessionId}:c`]);
    await lock.release();
    console.log(`      queued acquire (wait 2000 ms) ended ${Math.round(ms)} ms after it was sent`);
  });
});
