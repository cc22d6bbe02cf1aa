import { expect } from "chai";
import { Redis } from "ioredis";
import { Coordinator } from "../../server/coordinator.js";
import { RECORD_REWRITTEN } from "../../server/engine/lifecycle/session-keeper.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { captureLog } from "../harness/log-capture.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, keepAliveMsg } from "../harness/requests.js";
import { until } from "../harness/until.js";

const TTL_MS = 1000;

// A Redis stall longer than a session's TTL lets its record expire in Redis while the stream lives on.
// The coordinator re-writes the record at the session's next keepalive that reaches the store, logs
// that once per session, and logs the outage itself once (not one stack per failed renewal).
describe("a session whose record expired while Redis was stopped", function () {
  this.timeout(60_000);
  let redis: TestRedis;
  let inspect: Redis;
  let coordinator: Coordinator;
  let address: string;
  const capture = captureLog("info");
  const sessions: RawSession[] = [];

  before(async () => {
    redis = await startRedis();
    inspect = new Redis(redis.url);
    coordinator = new Coordinator({
      store: new RedisStore({ url: redis.url, commandTimeoutMs: 300 }),
      log: capture.log,
      listen: "127.0.0.1:0",
      shutdownGraceMs: 200,
    });
    address = `127.0.0.1:${await coordinator.start()}`;
  });
  after(async () => {
    for (const s of sessions) s.close();
    redis.process.kill("SIGCONT");
    inspect.disconnect();
    await coordinator.stop();
    await redis.stop();
  });

  it("re-writes the record at the next keepalive that succeeds, says so once, and the session can be resumed again", async () => {
    const a = new RawSession(address);
    sessions.push(a);
    const opened = await a.open(TTL_MS);
    const record = `turnstile:session:{${opened.sessionId}}`;
    a.send(keepAliveMsg(1));
    await a.next("keepAliveAck");
    const lastTouch = performance.now();
    redis.process.kill("SIGSTOP");
    try {
      // Keepalives go on during the stall; each renewal fails after the 300 ms command timeout.
      for (let seq = 2; performance.now() - lastTouch < TTL_MS * 2; seq++) {
        a.send(keepAliveMsg(seq));
        await new Promise((resolve) => setTimeout(resolve, TTL_MS / 3));
      }
    } finally {
      redis.process.kill("SIGCONT");
    }
    // Precondition, checked: the record expired in Redis during the stall.
    expect(await inspect.exists(record)).to.equal(0);
    const repaired = () => capture.lines.filter((l) => l.msg === RECORD_REWRITTEN && l.session === opened.sessionId);
    let seq = 100;
    await until(
      async () => {
        a.send(keepAliveMsg(++seq));
        await a.next("keepAliveAck", (k) => k.keepAliveAck.seq === BigInt(seq), 5000).catch(() => undefined);
        return repaired().length > 0;
      },
      "the record re-written",
      20_000,
      TTL_MS / 3,
    );
    for (let i = 0; i < 3; i++) {
      a.send(keepAliveMsg(++seq));
      await a.next("keepAliveAck", (k) => k.keepAliveAck.seq === BigInt(seq));
    }
    expect(await inspect.exists(record)).to.equal(1);
    expect(repaired(), "one line for the session, not one per keepalive").to.have.length(1);
    const b = new RawSession(address);
    sessions.push(b);
    b.sendOpen(TTL_MS, { sessionId: opened.sessionId, secret: opened.resumeSecret });
    expect((await b.next("opened")).opened.resumed).to.equal(true);
  });

  it("logged the outage once at warn, without a stack, and its end with the count", () => {
    const warned = capture.lines.filter((l) => l.level === 40);
    expect(warned.map((l) => l.msg)).to.deep.equal([
      "store errors began: logged once until the store answers again (each failure at debug level)",
    ]);
    expect(JSON.stringify(capture.lines)).to.not.include('"stack"');
    const ended = capture.lines.find((l) => l.msg === "store errors ended");
    expect((ended?.byWhat as Record<string, number> | undefined)?.["keepalive renewal"]).to.be.at.least(2);
  });

  // With locks, the keepalive's touch of the record rides in renew.lua (one Redis): the same repair.
  it("re-writes a record that a keepalive renewing locks finds lapsed, says so once, and resume renews both", async () => {
    const a = new RawSession(address);
    sessions.push(a);
    const opened = await a.open(30_000);
    const record = `turnstile:session:{${opened.sessionId}}`;
    a.send(acquireMsg("k1", "repair/held", { owner: "me" }));
    const { fencingToken } = (await a.next("acquired")).acquired;
    await inspect.del(record); // as if it had expired during an outage
    for (const seq of [1, 2]) {
      a.send(keepAliveMsg(seq));
      await a.next("keepAliveAck", (k) => k.keepAliveAck.seq === BigInt(seq));
    }
    const repaired = capture.lines.filter((l) => l.msg === RECORD_REWRITTEN && l.session === opened.sessionId);
    expect(repaired, "one line for the session, not one per keepalive").to.have.length(1);
    expect(await inspect.pttl(record)).to.be.within(20_000, 30_000);
    a.close();
    await inspect.pexpire(record, 5_000);
    const b = new RawSession(address);
    sessions.push(b);
    const claim = { name: "repair/held", owner: "me", fencingToken, holdCount: 1 };
    b.sendOpen(30_000, { sessionId: opened.sessionId, secret: opened.resumeSecret, held: [claim] });
    expect((await b.next("opened")).opened.held).to.deep.equal([claim]);
    expect(await inspect.pttl(record), "the record touched with the resumed holds").to.be.above(20_000);
  });
});
