import { status } from "@grpc/grpc-js";
import { expect } from "chai";
import { TurnstileClient } from "../../client/index.js";
import { FailureReason } from "../../gen/ts/turnstile/v1/turnstile.js";
import { DEFAULT_LIMITS, largestOpenBytes } from "../../server/config/limits.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, keepAliveMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

// --max-message-bytes bounds every message but the session's open: a resume's open lists every hold,
// and a session may hold --max-locks-per-session locks, so the coordinator reads up to
// largestOpenBytes and refuses any other message past maxMessageBytes by itself, keeping the session.
describe("messages past --max-message-bytes, and a resume's open that lists hundreds of holds", () => {
  let redis: TestRedis;
  let a: TestCoordinator;
  let b: TestCoordinator;

  before(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([startCoordinator(redis.url), startCoordinator(redis.url)]);
  });
  after(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await redis.stop();
  });

  it("resumes a session holding 600 locks of 100-byte names on another coordinator after a drain (its open is past 64 KiB)", async () => {
    const c = new TurnstileClient([a.address, b.address], { ttlMs: 20_000 });
    const resumed = new Promise<void>((resolve) => c.once("resumed", () => resolve()));
    try {
      const locks = [];
      for (let i = 0; i < 600; i++)
        locks.push(await c.acquire(`big-open/${String(i).padStart(3, "0")}/${"x".repeat(100)}`));
      const session = c.sessionId;
      const draining = a.stop();
      await resumed;
      await draining;
      expect([c.sessionId, locks.filter((l) => l.lost).length]).to.deep.equal([session, 0]);
      await Promise.all(locks.map((l) => l.release()));
    } finally {
      await c.close();
    }
    a = await startCoordinator(redis.url);
  });

  it("answers any other message past --max-message-bytes with Failed{INVALID_ARGUMENT} naming its size, and keeps the session", async () => {
    const s = new RawSession(b.address);
    try {
      await s.open();
      s.send(acquireMsg("big", "big-open/value", { value: Buffer.alloc(100_000) }));
      const { failed } = await s.next("failed", (f) => f.failed.requestId === "big");
      expect([failed.reason, failed.message]).to.deep.equal([
        FailureReason.FAILURE_REASON_INVALID_ARGUMENT,
        `request: ${failed.message.match(/\d+/)?.[0]} bytes exceeds the maximum of 65536 bytes (--max-message-bytes)`,
      ]);
      expect(Number(failed.message.match(/\d+/)?.[0])).to.be.above(100_000);
      s.send(keepAliveMsg(1));
      await s.next("keepAliveAck");
      expect(s.ended).to.equal(undefined);
    } finally {
      s.close();
    }
  });

  it("ends the stream RESOURCE_EXHAUSTED for a message past the largest open", async () => {
    const s = new RawSession(b.address);
    try {
      await s.open();
      s.send(acquireMsg("huge", "big-open/huge", { value: Buffer.alloc(largestOpenBytes(DEFAULT_LIMITS) + 1) }));
      expect((await s.status()).code).to.equal(status.RESOURCE_EXHAUSTED);
    } finally {
      s.close();
    }
  });
});
