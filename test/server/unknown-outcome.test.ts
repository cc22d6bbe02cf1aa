import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { Redis } from "ioredis";
import { FailureReason } from "../../gen/ts/turnstile/v1/turnstile.js";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, keepAliveMsg, releaseMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { until } from "../harness/until.js";

// Short, so a stall of a second or two leaves several commands of unknown outcome on the socket.
const COMMAND_TIMEOUT_MS = 250;

/** Holder ids ("session:owner") of a lock in Redis, read directly. */
async function holdersOf(redis: Redis, name: string): Promise<string[]> {
  return redis.zrange(lockKeys("turnstile", name)[0], "0", "-1");
}

describe("unknown store outcomes (redis-server SIGSTOPped past the command timeout)", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  let inspect: Redis;
  const sessions: RawSession[] = [];
  const session = () => {
    const s = new RawSession(coord.address);
    sessions.push(s);
    return s;
  };
  const stall = () => redis.process.kill("SIGSTOP");
  const resume = () => redis.process.kill("SIGCONT");
  // Waits on the coordinator's own state: a store call timed out and is being resolved.
  const untilUnresolved = () =>
    until(async () => coord.coordinator.table.resolver.unresolved > 0, "an unresolved store outcome", 10_000);

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url, {}, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
  });
  afterEach(() => {
    resume();
    for (const s of sessions.splice(0)) s.close();
  });
  after(async () => {
    inspect?.disconnect();
    await coord.stop();
    await redis.stop();
  });

  describe("acquire", () => {
    it("answers Acquired once Redis resumes (not UNAVAILABLE), and Redis holds it for that session only", async () => {
      inspect ??= new Redis(redis.url);
      const a = session();
      const { sessionId } = await a.open(10_000);
      stall();
      a.send(acquireMsg("a1", "uo/free", { waitMs: 0 }));
      await untilUnresolved();
      expect(a.received.filter((r) => r.kind?.$case === "failed")).to.deep.equal([]);
      resume();
      const acquired = (await a.next("acquired", (x) => x.acquired.requestId === "a1", 10_000)).acquired;
      expect(acquired.holdCount).to.equal(1);
      expect(await holdersOf(inspect, "uo/free")).to.deep.equal([`${sessionId}:a1`]);
      const b = session();
      await b.open(10_000);
      b.send(acquireMsg("b1", "uo/free", { waitMs: 0 }));
      expect((await b.next("failed")).failed.reason).to.equal(FailureReason.FAILURE_REASON_BUSY);
    });

    it("answers TIMEOUT when its wait ends while the outcome is unknown, and withdraws the claim once Redis resumes", async () => {
      inspect ??= new Redis(redis.url);
      const a = session();
      await a.open(10_000);
      stall();
      a.send(acquireMsg("a2", "uo/timeout", { waitMs: 600 }));
      await untilUnresolved();
      const failed = (await a.next("failed", (f) => f.failed.requestId === "a2", 10_000)).failed;
      expect(failed.reason).to.equal(FailureReason.FAILURE_REASON_TIMEOUT);
      resume();
      // The acquire that was on the socket ran, then the withdrawal right behind it let go.
      await until(async () => (await holdersOf(inspect, "uo/timeout")).length === 0, "the ghost to go", 10_000);
      const b = session();
      const { sessionId } = await b.open(10_000);
      b.send(acquireMsg("b2", "uo/timeout", { waitMs: 0 }));
      expect((await b.next("acquired")).acquired.requestId).to.equal("b2");
      expect(await holdersOf(inspect, "uo/timeout")).to.deep.equal([`${sessionId}:b2`]);
    });

    it("counts a re-entry once although it ran again: two releases let go of the lock", async () => {
      inspect ??= new Redis(redis.url);
      const evalshaCalls = async () =>
        Number(/cmdstat_evalsha:calls=(\d+)/.exec(await inspect.info("commandstats"))?.[1] ?? 0);
      const a = session();
      const { sessionId } = await a.open(10_000);
      a.send(acquireMsg("a4", "uo/reentry", { owner: "me" }));
      const token = (await a.next("acquired")).acquired.fencingToken;
      // The earlier tests' withdrawals settled: the unresolved outcome awaited below is this acquire's.
      await until(async () => coord.coordinator.table.resolver.unresolved === 0, "earlier outcomes to settle", 10_000);
      const before = await evalshaCalls();
      stall();
      a.send(acquireMsg("a5", "uo/reentry", { owner: "me" }));
      await untilUnresolved();
      resume();
      // The first attempt timed out, so the answer comes from a re-run behind it; both ran in Redis.
      const acquired = (await a.next("acquired", (x) => x.acquired.requestId === "a5", 10_000)).acquired;
      expect(await evalshaCalls(), "acquire.lua runs (no keepalive was sent)").to.be.at.least(before + 2);
      expect([acquired.holdCount, acquired.fencingToken]).to.deep.equal([2, token]);
      const [, data] = lockKeys("turnstile", "uo/reentry");
      expect(await inspect.hget(data, `h:${sessionId}:me`)).to.match(/^\d+ 2 1 /);
      a.send(releaseMsg("r4", "uo/reentry", "me"));
      expect((await a.next("released", (r) => r.released.requestId === "r4")).released.holdCount).to.equal(1);
      a.send(releaseMsg("r5", "uo/reentry", "me"));
      expect((await a.next("released", (r) => r.released.requestId === "r5")).released.holdCount).to.equal(0);
      expect(await holdersOf(inspect, "uo/reentry")).to.deep.equal([]);
    });
  });

  describe("release", () => {
    it("is answered Released once Redis resumes; keepalives meanwhile do not renew it, and the next holder gets it", async () => {
      inspect ??= new Redis(redis.url);
      const a = session();
      await a.open(10_000);
      a.send(acquireMsg("a3", "uo/release"));
      await a.next("acquired");
      stall();
      a.send(releaseMsg("r3", "uo/release", "a3"));
      a.send(keepAliveMsg(1));
      await untilUnresolved();
      resume();
      const released = (await a.next("released", (r) => r.released.requestId === "r3", 10_000)).released;
      expect(released.holdCount).to.equal(0);
      expect(await holdersOf(inspect, "uo/release")).to.deep.equal([]);
      const b = session();
      await b.open(10_000);
      b.send(acquireMsg("b3", "uo/release", { waitMs: 0 }));
      expect((await b.next("acquired")).acquired.requestId).to.equal("b3");
    });
  });
});

describe("a release while redis-server is down (killed, restarted from its AOF)", () => {
  let dir: string;
  let redis: TestRedis;
  let coord: TestCoordinator;
  const sessions: RawSession[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "turnstile-uo-aof-"));
    redis = await startRedis({ dir, appendonly: true });
    coord = await startCoordinator(redis.url, {}, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
  });
  after(async () => {
    for (const s of sessions) s.close();
    await coord.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is not lost: the coordinator retries it, keepalives do not renew the hold, and B gets the lock within the TTL", async () => {
    const ttlMs = 3000;
    const a = new RawSession(coord.address);
    const b = new RawSession(coord.address);
    sessions.push(a, b);
    await a.open(ttlMs);
    a.send(acquireMsg("a", "uo/aof"));
    await a.next("acquired");
    await redis.stop();
    a.send(releaseMsg("ra", "uo/aof", "a"));
    await until(async () => coord.coordinator.table.resolver.unresolved > 0, "the release to be retried");
    redis = await startRedis({ port: redis.port, dir, appendonly: true });
    // A's keepalives go on; they must not keep the hold alive.
    const keepalives = setInterval(() => a.send(keepAliveMsg(Date.now())), 300);
    try {
      const released = (await a.next("released", (r) => r.released.requestId === "ra", 15_000)).released;
      expect(released.holdCount).to.equal(0);
      await b.open(ttlMs);
      b.send(acquireMsg("b", "uo/aof", { waitMs: ttlMs }));
      expect((await b.next("acquired", () => true, ttlMs + 2000)).acquired.requestId).to.equal("b");
      const inspect = new Redis(redis.url);
      try {
        expect((await holdersOf(inspect, "uo/aof")).map((h) => h.split(":")[1])).to.deep.equal(["b"]);
      } finally {
        inspect.disconnect();
      }
    } finally {
      clearInterval(keepalives);
    }
  });
});
