import { credentials, status } from "@grpc/grpc-js";
import { expect } from "chai";
import {
  type DescribeRequest,
  type DescribeResponse,
  type ListRequest,
  type ListResponse,
  LockMode,
  LockServiceClient,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { RawSession } from "../harness/raw-session.js";
import { RecordingListener } from "../harness/recording-listener.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { failureOf, unary } from "../harness/unary.js";

describe("Describe and List", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  let rpc: LockServiceClient;
  const open: RawSession[] = [];
  const session = async () => {
    const s = new RawSession(coord.address);
    open.push(s);
    return Object.assign(s, { id: (await s.open(60_000)).sessionId });
  };
  const describeLock = (name: string) => unary<DescribeRequest, DescribeResponse>(rpc.describe.bind(rpc), { name });
  const list = (prefix: string, pageSize: number, pageToken = "") =>
    unary<ListRequest, ListResponse>(rpc.list.bind(rpc), { prefix, pageSize, pageToken });

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
    rpc = new LockServiceClient(coord.address, credentials.createInsecure());
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  after(async () => {
    rpc.close();
    await coord.stop();
    await redis.stop();
  });

  describe("Describe", () => {
    it("answers the holders with their values, tokens and lease left, and the waiters in queue order", async () => {
      const [s1, s2, s3] = [await session(), await session(), await session()];
      const opts = { mode: LockMode.LOCK_MODE_SHARED, limit: 1 };
      s1.send(acquireMsg("r1", "describe/a", { ...opts, owner: "leader", value: Buffer.from("10.0.0.1") }));
      const acquired = await s1.next("acquired");
      s2.send(acquireMsg("r2", "describe/a", { ...opts, owner: "second" }));
      s3.send(acquireMsg("r3", "describe/a", { owner: "writer" }));
      await s2.next("queued");
      await s3.next("queued");
      const d = await describeLock("describe/a");
      expect([d.name, d.mode, d.limit]).to.deep.equal(["describe/a", LockMode.LOCK_MODE_SHARED, 1]);
      expect(d.holders.map((h) => [h.owner, h.value.toString(), h.fencingToken, h.holdCount])).to.deep.equal([
        ["leader", "10.0.0.1", acquired.acquired.fencingToken, 1],
      ]);
      expect(Number(d.holders[0].leaseRemaining?.seconds)).to.be.within(50, 60);
      expect(d.waiters.map((w) => [w.requestId, w.owner, w.position, w.mode])).to.deep.equal([
        ["r2", "second", 1, LockMode.LOCK_MODE_SHARED],
        ["r3", "writer", 2, LockMode.LOCK_MODE_EXCLUSIVE],
      ]);
      expect(d.holders[0].sessionId).to.equal(s1.id);
      expect(d.waiters.map((w) => w.sessionId)).to.deep.equal([s2.id, s3.id]);
    });

    it("answers each waiter's client, wait so far and the holders it waits behind, with how long they held", async () => {
      const [s1, s2, s3] = [await session(), await session(), await session()];
      s1.send(acquireMsg("r1", "describe/behind", { owner: "holder" }));
      const { fencingToken } = (await s1.next("acquired")).acquired;
      s2.send(acquireMsg("r2", "describe/behind", { owner: "first" }));
      await s2.next("queued");
      s3.send(acquireMsg("r3", "describe/behind", { owner: "second" }));
      await s3.next("queued");
      const d = await describeLock("describe/behind");
      const ms = (x?: { seconds: bigint; nanos: number }) => Number(x?.seconds ?? -1n) * 1000 + (x?.nanos ?? 0) / 1e6;
      expect(d.waiters.map((w) => [w.owner, w.position, w.clientName])).to.deep.equal([
        ["first", 1, "test"],
        ["second", 2, "test"],
      ]);
      // The first queued earlier, so it has waited at least as long as the second.
      expect(ms(d.waiters[0].waited)).to.be.at.least(ms(d.waiters[1].waited)).and.at.least(0);
      for (const w of d.waiters) {
        expect(w.blockedBy.map(({ heldFor, ...b }) => b)).to.deep.equal([
          {
            sessionId: s1.id,
            owner: "holder",
            clientName: "test",
            identity: "",
            fencingToken,
            mode: LockMode.LOCK_MODE_EXCLUSIVE,
            name: "",
          },
        ]);
        expect(ms(w.blockedBy[0].heldFor)).to.equal(ms(d.holders[0].heldFor)).and.be.at.least(ms(w.waited));
      }
    });

    it("answers a free lock with no holders and no waiters", async () => {
      const d = await describeLock("describe/free");
      expect([d.holders, d.waiters, d.mode]).to.deep.equal([[], [], LockMode.LOCK_MODE_UNSPECIFIED]);
    });

    it("fails with INVALID_ARGUMENT naming the field for a name over 256 bytes", async () => {
      const err = await failureOf(describeLock("x".repeat(257)));
      expect([err.code, err.details]).to.deep.equal([
        status.INVALID_ARGUMENT,
        "describe.name: 257 bytes exceeds the maximum of 256 bytes",
      ]);
    });
  });

  describe("List", () => {
    it("lists 10,000 locks exactly once across pages of at most the page size", async function () {
      this.timeout(60_000);
      const store = new RedisStore({ url: redis.url });
      await store.start(new RecordingListener());
      const names = Array.from({ length: 10_000 }, (_, i) => `many/${i}`);
      try {
        for (let i = 0; i < names.length; i += 1000) {
          await Promise.all(
            names.slice(i, i + 1000).map((name) =>
              store.acquire({
                name,
                sessionId: "ab",
                owner: "o",
                requestId: "r",
                ttlMs: 120_000,
                mode: "exclusive",
                limit: 0,
                mayWait: false,
              }),
            ),
          );
        }
      } finally {
        await store.close();
      }
      for (const pageSize of [1000, 337]) {
        const seen: string[] = [];
        let pages = 0;
        let token = "";
        do {
          const page: ListResponse = await list("many/", pageSize, token);
          expect(page.locks.length).to.be.at.most(pageSize);
          seen.push(...page.locks.map((l) => l.name));
          token = page.nextPageToken;
          pages++;
        } while (token !== "");
        expect(seen.length, `page size ${pageSize}`).to.equal(names.length);
        expect(new Set(seen).size).to.equal(names.length);
        expect(pages).to.be.at.least(Math.ceil(names.length / pageSize));
      }
    });

    it("summarises each lock with its holders' mode, limit, holder and waiter counts", async () => {
      const [s1, s2] = [await session(), await session()];
      s1.send(acquireMsg("r1", "summary/one"));
      await s1.next("acquired");
      s2.send(acquireMsg("r2", "summary/one"));
      await s2.next("queued");
      const page = await list("summary/", 10);
      expect(page.locks).to.deep.equal([
        { name: "summary/one", mode: LockMode.LOCK_MODE_EXCLUSIVE, limit: 0, holderCount: 1, waiterCount: 1 },
      ]);
      expect(page.nextPageToken).to.equal("");
    });

    it("fails with INVALID_ARGUMENT naming the field and the limit for a page size over 1000", async () => {
      const err = await failureOf(list("", 1001));
      expect([err.code, err.details]).to.deep.equal([
        status.INVALID_ARGUMENT,
        "list.page_size: 1001 exceeds the maximum of 1000",
      ]);
    });

    it("fails with INVALID_ARGUMENT naming the field for a prefix over 256 bytes or with control characters", async () => {
      const long = await failureOf(list("p".repeat(257), 10));
      expect([long.code, long.details]).to.deep.equal([
        status.INVALID_ARGUMENT,
        "list.prefix: 257 bytes exceeds the maximum of 256 bytes",
      ]);
      const control = await failureOf(list("a\u0000", 10));
      expect(control.details).to.equal("list.prefix: must not contain control characters");
    });

    it("fails with INVALID_ARGUMENT for a page token it did not issue", async () => {
      const err = await failureOf(list("", 10, "bogus"));
      expect(err.code).to.equal(status.INVALID_ARGUMENT);
      expect(err.details).to.match(/^list\.page_token: /);
    });
  });
});
