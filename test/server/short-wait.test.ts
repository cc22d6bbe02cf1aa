import { expect } from "chai";
import { pino } from "pino";
import { Coordinator } from "../../server/coordinator.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireAllMsg, acquireMsg, releaseMsg } from "../harness/requests.js";
import { TcpProxy } from "../harness/tcp-proxy.js";

// Issue 32 item 7: the wait bounds time in the queue, not the store call that decides whether there
// is one. Redis sits behind a link with 15 ms of latency each way, so every store call takes far longer
// than a 1 or 2 ms wait: an acquire of a free lock must still be granted, with the next fencing token.
describe("a very short wait on a free lock, with a slow link to Redis", function () {
  this.timeout(30_000);
  let redis: TestRedis;
  let proxy: TcpProxy;
  let coordinator: Coordinator;
  let session: RawSession;
  let address: string;

  before(async () => {
    redis = await startRedis();
    proxy = await TcpProxy.start(`127.0.0.1:${redis.port}`, { delayMs: 15 });
    coordinator = new Coordinator({
      store: new RedisStore({ url: `redis://${proxy.address}` }),
      log: pino({ level: process.env.TEST_LOG ?? "silent" }),
      listen: "127.0.0.1:0",
      shutdownGraceMs: 200,
    });
    address = `127.0.0.1:${await coordinator.start()}`;
    session = new RawSession(address);
    await session.open(10_000);
  });
  after(async () => {
    session?.close();
    await coordinator?.stop();
    await proxy?.stop();
    await redis?.stop();
  });

  it("grants every acquire with waitMs 1 or 2 and skips no fencing token", async () => {
    const tokens: bigint[] = [];
    for (let i = 0; i < 10; i++) {
      session.send(acquireMsg(`a${i}`, "short/free", { waitMs: 1 + (i % 2) }));
      // A Failed instead shows in the timeout's message (it lists what was received).
      const { acquired } = await session.next("acquired", (r) => r.acquired.requestId === `a${i}`);
      tokens.push(acquired.fencingToken);
      session.send(releaseMsg(`r${i}`, "short/free", `a${i}`));
      await session.next("released");
    }
    expect(tokens.map((t) => t - tokens[0])).to.deep.equal([...Array(10).keys()].map(BigInt));
  });

  it("grants a free set with waitMs 1", async () => {
    session.send(acquireAllMsg("set1", ["short/s1", "short/s2"], 1));
    await session.next("acquiredAll", (r) => r.acquiredAll.requestId === "set1");
    for (const name of ["short/s1", "short/s2"]) {
      session.send(releaseMsg(`r-${name}`, name, "o"));
      await session.next("released");
    }
  });

  it("still times out an acquire that queues: the wait bounds the time in the queue", async () => {
    session.send(acquireMsg("held", "short/held"));
    await session.next("acquired");
    const other = new RawSession(address);
    try {
      await other.open(10_000);
      other.send(acquireMsg("w", "short/held", { waitMs: 1 }));
      const { failed } = await other.next("failed", (r) => r.failed.requestId === "w");
      expect(failed.message).to.match(/acquire\.wait: 1 ms ran out; waited behind "held"/);
      other.send(acquireAllMsg("ws", ["short/held", "short/other"], 2));
      const set = await other.next("failed", (r) => r.failed.requestId === "ws");
      expect(set.failed.message).to.match(/acquire_all\.wait: 2 ms ran out/);
    } finally {
      other.close();
    }
  });
});
