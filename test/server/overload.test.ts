import { status } from "@grpc/grpc-js";
import { expect } from "chai";
import { Redis } from "ioredis";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, keepAliveMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { until } from "../harness/until.js";

describe("overload and intake bounds (real coordinator, real redis-server)", () => {
  let redis: TestRedis;
  let inspect: Redis;
  const coordinators: TestCoordinator[] = [];
  const sessions: RawSession[] = [];
  const coordinator = async (...args: Parameters<typeof startCoordinator> extends [string, ...infer R] ? R : never) => {
    const c = await startCoordinator(redis.url, ...args);
    coordinators.push(c);
    return c;
  };
  const session = (c: TestCoordinator) => {
    const s = new RawSession(c.address);
    sessions.push(s);
    return s;
  };

  before(async () => {
    redis = await startRedis();
    inspect = new Redis(redis.url);
  });
  afterEach(async () => {
    redis.process.kill("SIGCONT");
    for (const s of sessions.splice(0)) s.close();
    await Promise.all(coordinators.splice(0).map((c) => c.stop()));
  });
  after(async () => {
    inspect.disconnect();
    await redis.stop();
  });

  describe("Open", () => {
    it("ends a stream that sends nothing with DEADLINE_EXCEEDED once the open timeout has passed", async () => {
      const c = await coordinator({ openTimeoutMs: 300 });
      // A stream reaches the coordinator with its headers, before any message.
      const silent = session(c);
      const ended = await silent.status(5000);
      expect(ended.code).to.equal(status.DEADLINE_EXCEEDED);
      expect(ended.details).to.match(/open must be the first message, within 300 ms/);
    });

    it("refuses a stream beyond max-unopened-streams with RESOURCE_EXHAUSTED; an opened stream no longer counts", async () => {
      const c = await coordinator({ maxUnopenedStreams: 2, openTimeoutMs: 60_000 });
      const a = session(c);
      await a.open(5000);
      const [, third] = [session(c), session(c)];
      await until(async () => c.coordinator.intake.waiting === 2, "two streams without open", 5000);
      const fourth = session(c);
      const ended = await fourth.status(5000);
      expect(ended.code).to.equal(status.RESOURCE_EXHAUSTED);
      expect(ended.details).to.match(/more than 2 session streams have not sent open yet/);
      expect(third.ended).to.equal(undefined);
    });

    it("pauses the stream while an Open waits for a stalled store: 500 requests behind it stay within max-early-messages 5, and are answered after", async () => {
      const c = await coordinator({ maxEarlyMessages: 5 }, { commandTimeoutMs: 10_000 });
      const s = session(c);
      redis.process.kill("SIGSTOP");
      s.sendOpen(10_000);
      for (let i = 0; i < 500; i++) s.send(acquireMsg(`e${i}`, `early/${i}`, { waitMs: 0 }));
      // The Open has arrived (the stream left the intake) and waits for the store.
      await until(async () => c.coordinator.intake.waiting === 0, "the open to arrive", 5000);
      await until(async () => s.stream.writableLength === 0, "the client to flush its requests", 5000);
      // A window for the abort that must not come: unpaused, the coordinator would read all 500 now.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(s.ended).to.equal(undefined);
      redis.process.kill("SIGCONT");
      const { sessionId } = (await s.next("opened", () => true, 10_000)).opened;
      for (let i = 0; i < 500; i++) await s.next("acquired", (x) => x.acquired.requestId === `e${i}`, 10_000);
      expect(s.ended).to.equal(undefined);
      expect(await inspect.zrange(lockKeys("turnstile", "early/499")[0], "0", "-1")).to.deep.equal([
        `${sessionId}:e499`,
      ]);
    });
  });

  describe("admission", () => {
    it("lets at most max-session-in-flight of a session's requests reach a stalled store, and answers all of them once it resumes", async () => {
      const c = await coordinator({ maxSessionInFlight: 4 }, { commandTimeoutMs: 250 });
      const s = session(c);
      const { sessionId } = await s.open(10_000);
      redis.process.kill("SIGSTOP");
      for (let i = 0; i < 50; i++) s.send(acquireMsg(`s${i}`, `stalled/${i}`, { waitMs: 0 }));
      await until(async () => c.coordinator.table.resolver.unresolved >= 4, "four unresolved acquires", 10_000);
      expect(c.coordinator.table.waiterCount).to.equal(4);
      redis.process.kill("SIGCONT");
      for (let i = 0; i < 50; i++) await s.next("acquired", (x) => x.acquired.requestId === `s${i}`, 15_000);
      const held = await inspect.zrange(lockKeys("turnstile", "stalled/49")[0], "0", "-1");
      expect(held).to.deep.equal([`${sessionId}:s49`]);
    });

    it("keeps bystanders' keepalives answered within their lease while 8 sessions flood 300 acquires each", async function () {
      this.timeout(60_000);
      const ttlMs = 1000;
      const c = await coordinator({ maxStoreInFlight: 64, maxSessionInFlight: 16 });
      const bystanders = [session(c), session(c), session(c)];
      const ids: string[] = [];
      for (const [i, b] of bystanders.entries()) {
        ids.push((await b.open(ttlMs)).sessionId);
        b.send(acquireMsg(`b${i}`, `bystander/${i}`));
        await b.next("acquired");
      }
      let worstAckMs = 0;
      let seq = 0;
      const beat = setInterval(() => {
        const sent = performance.now();
        const n = ++seq;
        for (const b of bystanders)
          b.next("keepAliveAck", (k) => k.keepAliveAck.seq === BigInt(n), ttlMs * 3).then(
            () => (worstAckMs = Math.max(worstAckMs, performance.now() - sent)),
            () => (worstAckMs = Number.POSITIVE_INFINITY),
          );
        for (const b of bystanders) b.send(keepAliveMsg(n));
      }, ttlMs / 4);
      try {
        const flooders = await Promise.all(
          Array.from({ length: 8 }, async () => {
            const f = session(c);
            await f.open(15_000);
            return f;
          }),
        );
        flooders.forEach((f, i) => {
          for (let j = 0; j < 300; j++) f.send(acquireMsg(`f${j}`, `flood/${i}/${j}`, { waitMs: 0 }));
        });
        for (const f of flooders)
          for (let j = 0; j < 300; j++) await f.next("acquired", (x) => x.acquired.requestId === `f${j}`, 30_000);
      } finally {
        clearInterval(beat);
      }
      expect(bystanders.flatMap((b) => b.received.filter((r) => r.kind?.$case === "lost"))).to.deep.equal([]);
      expect(worstAckMs).to.be.below(ttlMs);
      for (const [i, id] of ids.entries())
        expect(await inspect.zrange(lockKeys("turnstile", `bystander/${i}`)[0], "0", "-1")).to.deep.equal([
          `${id}:b${i}`,
        ]);
    });
  });
});
