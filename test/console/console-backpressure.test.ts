import { expect } from "chai";
import { type Lock, TurnstileClient } from "../../client/index.js";
import { CONSOLE_TOKENS, startConsole, type TestConsole } from "../harness/console-server.js";
import { ConsoleStream } from "../harness/console-stream.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";

// A browser that stops reading must not make the coordinator queue without bound: the console
// queues at most maxBufferBytes (plus the message that crossed it) and, once the reader drained,
// sends a fresh list instead of what it missed.
describe("web console stream back-pressure", function () {
  this.timeout(120_000);
  const maxBufferBytes = 64 * 1024;
  let redis: TestRedis;
  let web: TestConsole;
  let client: TurnstileClient;
  const held: Lock[] = [];

  before(async () => {
    redis = await startRedis();
    web = await startConsole(redis.url, { limits: { refreshMs: 20, maxBufferBytes } });
    client = new TurnstileClient(web.coord.address, { ttlMs: 60_000 });
    // 200 locks with long names: each list message is about 60 KB.
    for (let i = 0; i < 200; i++)
      held.push(await client.acquire(`slow/${String(i).padStart(3, "0")}-${"n".repeat(200)}`));
  });
  after(async () => {
    await client.close();
    await web.stop();
    await redis.stop();
  });

  it("queues at most maxBufferBytes for a reader that stopped, then resyncs it with a fresh list", async () => {
    const stream = await ConsoleStream.open(`${web.url}/api/stream?prefix=slow%2F`, CONSOLE_TOKENS.reader);
    const first = await stream.next("list", (l) => l.locks.length === 200);
    const messageBytes = JSON.stringify(first.data).length + 32;
    stream.pause();
    // Every acquire and release of the churn lock changes the list, so each refresh has ~60 KB to send.
    let changes = 0;
    const deadline = Date.now() + 90_000;
    while (web.handler.stats.overflows === 0 && Date.now() < deadline) {
      const churn = await client.acquire("slow/churn");
      await new Promise((resolve) => setTimeout(resolve, 25));
      await churn.release();
      await new Promise((resolve) => setTimeout(resolve, 25));
      changes += 2;
    }
    expect(web.handler.stats.overflows, `overflows after ${changes} list changes`).to.equal(1);
    // Keep changing the list while the reader is stalled: nothing more is queued.
    for (let i = 0; i < 20; i++) {
      const churn = await client.acquire("slow/churn");
      await new Promise((resolve) => setTimeout(resolve, 25));
      await churn.release();
    }
    const { peakBufferedBytes, overflows } = web.handler.stats;
    console.log(
      `      ${changes + 40} list changes of ~${messageBytes} B each while stalled; peak queued ${peakBufferedBytes} B (bound ${maxBufferBytes} B + one message); overflows ${overflows}`,
    );
    expect(peakBufferedBytes).to.be.at.most(maxBufferBytes + messageBytes);
    expect(overflows).to.equal(1);

    const final = await client.acquire("slow/final");
    const seen = stream.events.length;
    stream.resume();
    const fresh = await stream.next(
      "list",
      (l) => l.locks.some((x: { name: string }) => x.name === "slow/final"),
      30_000,
      seen,
    );
    expect(fresh.data.locks).to.have.length(201);
    expect(web.handler.stats.clients).to.equal(1);
    stream.close();
    await final.release();
  });
});
