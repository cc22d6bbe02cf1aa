import { expect } from "chai";
import { pino } from "pino";
import { type Leader, TurnstileClient, TurnstileError } from "../../client/index.js";
import { Coordinator } from "../../server/coordinator.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { freePort } from "../harness/free-port.js";
import { LeaderLog } from "../harness/leader-log.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { until } from "../harness/until.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

const text = (leader: Leader | null | undefined) => (leader ? Buffer.from(leader.value).toString() : leader);

describe("Election", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  const clients: TurnstileClient[] = [];
  const logs: LeaderLog[] = [];
  const client = (address = coord.address) => {
    const c = new TurnstileClient(address, { ttlMs: 10_000 });
    clients.push(c);
    return c;
  };
  const observe = (name: string, c = client()) => {
    const log = new LeaderLog(c.election(name));
    logs.push(log);
    return log;
  };

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
  });
  afterEach(async () => {
    await Promise.all(logs.splice(0).map((l) => l.stop()));
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  });
  after(async () => {
    await coord.stop();
    await redis.stop();
  });

  describe("campaign()", () => {
    it("elects the first candidate, makes the next one wait, and elects it when the leader resigns", async () => {
      const first = await client().election("e/basic").campaign("a");
      const waiting = client().election("e/basic").campaign("b");
      await waitForQueue(redis.url, "e/basic", 1);
      expect(text(await client().election("e/basic").leader())).to.equal("a");
      await first.resign();
      const second = await waiting;
      expect(second.fencingToken > first.fencingToken).to.equal(true);
      expect([first.signal.aborted, first.lost, second.lost]).to.deep.equal([true, false, false]);
      expect(text(await client().election("e/basic").leader())).to.equal("b");
      await second.resign();
      expect(await client().election("e/basic").leader()).to.equal(null);
    });

    it("rejects a value over 4096 bytes with 'invalid-argument' naming the field and the limit", async () => {
      const campaign = client().election("e/big").campaign(new Uint8Array(4097));
      const error = await campaign.catch((e: unknown) => e);
      expect(error).to.be.instanceOf(TurnstileError).with.property("reason", "invalid-argument");
      expect((error as Error).message).to.include("acquire.value: 4097 bytes exceeds the maximum of 4096 bytes");
      const ok = await client().election("e/big").campaign(new Uint8Array(4096));
      expect((await client().election("e/big").leader())?.value.length).to.equal(4096);
      await ok.resign();
    });

    it("rejects with the signal's reason when aborted while waiting, and leaves the queue", async () => {
      const leader = await client().election("e/abort").campaign("a");
      const controller = new AbortController();
      const waiting = client().election("e/abort").campaign("b", { signal: controller.signal });
      await waitForQueue(redis.url, "e/abort", 1);
      controller.abort();
      expect(await waiting.catch((e: unknown) => e)).to.have.property("name", "AbortError");
      await leader.resign();
      expect(await client().election("e/abort").leader()).to.equal(null);
    });
  });

  describe("proclaim()", () => {
    it("replaces the leader's value for leader() and observers", async () => {
      const log = observe("e/proclaim");
      await log.until(() => log.current === null, "no leader");
      const leadership = await client().election("e/proclaim").campaign("10.0.0.1:80");
      await log.until(() => text(log.current) === "10.0.0.1:80", "the first value");
      await leadership.proclaim("10.0.0.2:80");
      expect(text(await client().election("e/proclaim").leader())).to.equal("10.0.0.2:80");
      await log.until(() => text(log.current) === "10.0.0.2:80", "the proclaimed value");
      expect(Buffer.from(leadership.value).toString()).to.equal("10.0.0.2:80");
      expect(log.seen.map(text)).to.deep.equal([null, "10.0.0.1:80", "10.0.0.2:80"]);
    });

    it("rejects a value over 4096 bytes with 'invalid-argument' and keeps the leadership and its value", async () => {
      const leadership = await client().election("e/proclaim-big").campaign("v1");
      const error = await leadership.proclaim(new Uint8Array(4097)).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(TurnstileError).with.property("reason", "invalid-argument");
      expect((error as Error).message).to.include("proclaim.value: 4097 bytes exceeds the maximum of 4096 bytes");
      expect([leadership.lost, text(await client().election("e/proclaim-big").leader())]).to.deep.equal([false, "v1"]);
    });

    it("rejects with 'not-held' after resigning", async () => {
      const leadership = await client().election("e/resigned").campaign("v1");
      await leadership.resign();
      const error = await leadership.proclaim("v2").catch((e: unknown) => e);
      expect(error).to.be.instanceOf(TurnstileError).with.property("reason", "not-held");
    });
  });

  describe("observe()", () => {
    it("reports the current leader first, then every change, with null when nobody leads", async () => {
      const a = await client().election("e/observe").campaign("a");
      const log = observe("e/observe");
      await log.until(() => text(log.current) === "a", "leader a");
      const waiting = client().election("e/observe").campaign("b");
      await waitForQueue(redis.url, "e/observe", 1);
      await a.resign();
      const b = await waiting;
      await log.until(() => text(log.current) === "b", "leader b");
      await b.resign();
      await log.until(() => log.current === null, "no leader");
      expect(log.seen.filter((l) => l !== null).map(text)).to.deep.equal(["a", "b"]);
      expect(log.tokens).to.deep.equal([a.fencingToken, b.fencingToken]);
      expect(log.current).to.equal(null);
    });

    it("cancels the Watch stream when the consumer breaks out of the loop", async () => {
      const election = client().election("e/break");
      for await (const leader of election.observe()) {
        expect(leader).to.equal(null);
        break;
      }
      await until(() => coord.coordinator.watches.size === 0, "the watch to end on the coordinator");
    });

    it("throws the signal's reason when aborted while waiting for a change", async () => {
      const controller = new AbortController();
      const seen: (Leader | null)[] = [];
      const observing = (async () => {
        for await (const leader of client().election("e/abort-observe").observe({ signal: controller.signal })) {
          seen.push(leader);
          controller.abort();
        }
      })();
      expect(await observing.catch((e: unknown) => e)).to.have.property("name", "AbortError");
      expect(seen).to.deep.equal([null]);
    });

    it("resumes watching after the stream breaks (coordinator restart) and reports the leader at that moment", async () => {
      const port = await freePort();
      const start = async () => {
        const c = new Coordinator({
          store: new RedisStore({ url: redis.url }),
          log: pino({ level: "silent" }),
          listen: `127.0.0.1:${port}`,
          shutdownGraceMs: 200,
        });
        await c.start();
        return c;
      };
      let restarting = await start();
      try {
        const log = observe("e/resume", client(`127.0.0.1:${port}`));
        await log.until(() => log.current === null, "no leader");
        await restarting.stop();
        const leader = await client().election("e/resume").campaign("elected meanwhile");
        restarting = await start();
        await log.until(() => text(log.current) === "elected meanwhile", "the leader elected during the break");
        expect(log.ended).to.equal(undefined);
        await leader.resign();
      } finally {
        await restarting.stop();
      }
    });

    it("throws 'invalid-argument' for a name the server refuses", async () => {
      const log = observe("");
      await until(() => log.ended !== undefined, "the observation to end");
      expect(log.ended).to.be.instanceOf(TurnstileError).with.property("reason", "invalid-argument");
    });
  });
});
