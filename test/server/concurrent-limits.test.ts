import { status } from "@grpc/grpc-js";
import { expect } from "chai";
import { Redis } from "ioredis";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { RawSession } from "../harness/raw-session.js";
import { RawWatch } from "../harness/raw-watch.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, releaseMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

describe("limits under concurrency", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  let client: Redis;
  const open: RawSession[] = [];
  const kills: CoordinatorProcess[] = [];

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url, { maxWatches: 10, maxLocksPerSession: 20 });
    client = new Redis(redis.url);
  });
  after(async () => {
    for (const s of open.splice(0)) s.close();
    client.disconnect();
    for (const c of kills) await c.kill();
    await coord.stop();
    await redis.stop();
  });

  it("starts exactly the watch limit (10 here) when 30 watches arrive at once", async () => {
    const watches = Array.from({ length: 30 }, () => new RawWatch(coord.address, "limits/watched"));
    try {
      const outcomes = await Promise.all(
        watches.map(
          (w) =>
            new Promise<string>((resolve) => {
              w.stream.once("data", () => resolve("snapshot"));
              w.stream.once("error", (e: { code: number; details: string }) => resolve(`${e.code} ${e.details}`));
            }),
        ),
      );
      expect(outcomes.filter((o) => o === "snapshot")).to.have.length(10);
      expect(
        outcomes.filter((o) => o === `${status.RESOURCE_EXHAUSTED} coordinator: at most 10 watches`),
      ).to.have.length(20);
    } finally {
      for (const w of watches) w.close();
    }
  });

  it("grants exactly --max-locks-per-session when 40 acquires arrive in one write, and stores only those", async () => {
    const s = new RawSession(coord.address);
    open.push(s);
    await s.open();
    for (let i = 0; i < 40; i++) s.send(acquireMsg(`r${i}`, `limits/many/${i}`));
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        Promise.race([
          s.next("acquired", (a) => a.acquired.requestId === `r${i}`, 15_000).then(() => "acquired"),
          s.next("failed", (f) => f.failed.requestId === `r${i}`, 15_000).then((f) => f.failed.message),
        ]),
      ),
    );
    expect(answers.filter((a) => a === "acquired")).to.have.length(20);
    expect(answers.filter((a) => a === "session: at most 20 locks held or pending per session")).to.have.length(20);
    expect(await client.keys("turnstile:{limits/many/*}:holders")).to.have.length(20);
  });

  it("opens exactly up to --max-sessions when 300 Opens arrive at once, and stores only those", async function () {
    this.timeout(60_000);
    // A `turnstile serve --max-sessions 100` process of its own, so no other test's session counts.
    const limited = await spawnCoordinator(redis.url, ["--max-sessions", "100"]);
    kills.push(limited);
    const bystander = new RawSession(limited.address);
    const second = new RawSession(limited.address);
    open.push(bystander, second);
    await Promise.all([bystander.open(60_000), second.open(60_000)]);
    bystander.send(acquireMsg("keep", "limits/bystander"));
    await bystander.next("acquired");

    const recordsBefore = new Set(await client.keys("turnstile:session:*"));
    const racers = Array.from({ length: 300 }, () => new RawSession(limited.address));
    open.push(...racers);
    // A long TTL: no keepalives are sent, and every record must still be there when counted.
    for (const s of racers) s.sendOpen(60_000);
    const outcomes = await Promise.all(
      racers.map((s) =>
        Promise.race([
          s.next("opened", () => true, 30_000).then(() => "opened"),
          s.status(30_000).then((st) => `${st.code} ${st.details}`),
        ]),
      ),
    );
    const counts = new Map<string, number>();
    for (const o of outcomes) counts.set(o, (counts.get(o) ?? 0) + 1);
    expect(Object.fromEntries(counts)).to.deep.equal({
      opened: 98,
      [`${status.RESOURCE_EXHAUSTED} coordinator: at most 100 sessions`]: 202,
    });
    // Only the sessions that opened have a record in Redis.
    const created = (await client.keys("turnstile:session:*")).filter((k) => !recordsBefore.has(k));
    expect(created).to.have.length(98);

    bystander.send(releaseMsg("rel", "limits/bystander", "keep"));
    expect((await bystander.next("released")).released.holdCount).to.equal(0);
    for (const s of open.splice(0)) s.close();
  });
});
