import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { Redis } from "ioredis";
import { type Lock, TurnstileClient, TurnstileError } from "../../client/index.js";
import { ANSWER_GRACE_MS } from "../../client/session/requests/acquire-deadlines.js";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";

// The stall of issue 16: longer than the coordinator's default 2 s command timeout, shorter than any TTL.
const STALL_MS = 4000;

/** Holder ids ("session:owner") of a lock, read from Redis directly. */
function holdersOf(redis: Redis, name: string): Promise<string[]> {
  return redis.zrange(lockKeys("turnstile", name)[0], "0", "-1");
}

/** Whether `promise` has settled yet, read without waiting. */
function track(promise: Promise<unknown>): { settled: boolean } {
  const state = { settled: false };
  promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

/** `promise`, or a rejection naming `what` after `ms`; the timer is cleared either way. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts `turnstile serve` and drains its log, so a chatty stall can never block it on a full pipe. */
async function serve(redisUrl: string): Promise<CoordinatorProcess> {
  const coordinator = await spawnCoordinator(redisUrl);
  coordinator.process.stdout?.resume();
  coordinator.process.stderr?.resume();
  return coordinator;
}

describe("the TS client against a real turnstile serve while redis-server stalls (SIGSTOP)", () => {
  let redis: TestRedis;
  let coordinator: CoordinatorProcess;
  let inspect: Redis;
  const clients: TurnstileClient[] = [];
  const client = (ttlMs = 15_000) => {
    const c = new TurnstileClient(coordinator.address, { ttlMs });
    clients.push(c);
    return c;
  };
  const stall = () => redis.process.kill("SIGSTOP");
  const resume = () => redis.process.kill("SIGCONT");

  before(async () => {
    redis = await startRedis();
    coordinator = await serve(redis.url);
    inspect = new Redis(redis.url);
  });
  afterEach(async () => {
    resume();
    await Promise.all(clients.splice(0).map((c) => c.close({ signal: AbortSignal.timeout(5000) }).catch(() => {})));
  });
  after(async () => {
    inspect.disconnect();
    await coordinator.kill();
    await redis.stop();
  });

  describe("acquire()", () => {
    it("a try-once during the stall ends 'timeout' by its wait + ANSWER_GRACE_MS, and once Redis resumes its claim is withdrawn, never held", async function () {
      this.timeout(40_000);
      const a = client();
      await a.connect();
      stall();
      const started = performance.now();
      // Bounded by the client's own deadline: Redis stays stopped until the acquire has ended.
      const error = await within(
        a.acquire("stall/free", { owner: "a", waitMs: 0 }).then(
          () => undefined,
          (e: unknown) => e,
        ),
        STALL_MS + 4000,
        "the try-once's end during the stall",
      );
      const endedMs = performance.now() - started;
      expect(error).to.be.instanceOf(TurnstileError);
      expect([(error as TurnstileError).reason, (error as TurnstileError).message]).to.deep.equal([
        "timeout",
        `"stall/free": no answer within acquire.wait of 0 ms + ${ANSWER_GRACE_MS} ms (coordinator unreachable or its store stalled); the acquire was withdrawn`,
      ]);
      resume();
      // Its script was already on Redis's socket and runs now; the coordinator withdraws the claim,
      // so B gets the lock far inside A's TTL (a kept claim would be renewed by A's keepalives for good).
      const b = client();
      const lock = await within(b.acquire("stall/free", { owner: "b", waitMs: 10_000 }), 12_000, "B's grant");
      expect(await holdersOf(inspect, "stall/free")).to.deep.equal([`${b.sessionId}:b`]);
      console.log(
        `      try-once ended after ${Math.round(endedMs)} ms of a stall (bound: 0 + ${ANSWER_GRACE_MS} ms + sweep)`,
      );
      await lock.release();
    });

    it("rejects 'timeout' when its wait ends during the stall; a retry with a fresh owner gets the lock right after Redis resumes, not behind a ghost of the first", async function () {
      this.timeout(40_000);
      const ttlMs = 15_000;
      const a = client(ttlMs);
      await a.connect();
      stall();
      // A wait past the 2 s command timeout: it ends while the acquire's outcome is unknown.
      const first = a.acquire("stall/ghost", { owner: "first", waitMs: 3000 });
      const error = await within(
        first.then(
          () => undefined,
          (e: unknown) => e,
        ),
        15_000,
        "the first acquire's answer",
      );
      expect(error).to.be.instanceOf(TurnstileError);
      expect((error as TurnstileError).reason).to.equal("timeout");
      const retry = a.acquire("stall/ghost", { owner: "second" });
      resume();
      // Far inside the TTL: a ghost hold of "first" renewed by the session's keepalives would block it for good.
      const lock: Lock = await within(retry, ttlMs / 2, "the retry's grant");
      expect(lock.lost).to.equal(false);
      expect(await holdersOf(inspect, "stall/ghost")).to.deep.equal([`${a.sessionId}:second`]);
    });
  });
});

describe("the TS client against a real turnstile serve while redis-server is killed and restarted from its AOF", () => {
  let dir: string;
  let redis: TestRedis;
  let coordinator: CoordinatorProcess;
  const clients: TurnstileClient[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "turnstile-aof-client-"));
    redis = await startRedis({ dir, appendonly: true });
    coordinator = await serve(redis.url);
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close({ signal: AbortSignal.timeout(5000) }).catch(() => {})));
    await coordinator.kill();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("release() made while Redis is down resolves once it is back, and B gets the lock within one TTL while A's keepalives go on", async function () {
    this.timeout(60_000);
    const ttlMs = 5000;
    const a = new TurnstileClient(coordinator.address, { ttlMs });
    const b = new TurnstileClient(coordinator.address, { ttlMs });
    clients.push(a, b);
    const held = await a.acquire("aof/x", { owner: "a" });
    await redis.stop();
    const releasing = held.release();
    const state = track(releasing);
    // A window for the answer that must not come: before the fix it was UNAVAILABLE, and nothing resent it.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(state.settled, "release() settled while Redis was down").to.equal(false);
    redis = await startRedis({ port: redis.port, dir, appendonly: true });
    await within(releasing, 20_000, "A's release");
    // Had the release been dropped, A's keepalives (still running: A stays open) would renew its hold for good.
    const lock = await within(b.acquire("aof/x", { owner: "b", waitMs: ttlMs + 2000 }), ttlMs + 5000, "B's grant");
    expect(lock.lost).to.equal(false);
    const inspect = new Redis(redis.url);
    try {
      expect(await holdersOf(inspect, "aof/x")).to.deep.equal([`${b.sessionId}:b`]);
    } finally {
      inspect.disconnect();
    }
  });
});
