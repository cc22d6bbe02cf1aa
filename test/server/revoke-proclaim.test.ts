import { credentials, status } from "@grpc/grpc-js";
import { expect } from "chai";
import { Redis } from "ioredis";
import {
  type DescribeRequest,
  type DescribeResponse,
  FailureReason,
  HolderChange,
  LockServiceClient,
  LostReason,
  type RevokeRequest,
  type RevokeResponse,
  type SessionResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { RawSession } from "../harness/raw-session.js";
import { RawWatch } from "../harness/raw-watch.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, keepAliveMsg, proclaimMsg, releaseMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { failureOf, unary } from "../harness/unary.js";

describe("Revoke and Proclaim", () => {
  let redis: TestRedis;
  let a: TestCoordinator;
  let b: TestCoordinator;
  let rpc: LockServiceClient;
  let redisClient: Redis;
  const opened: { close(): void }[] = [];
  const session = async (c: TestCoordinator) => {
    const s = new RawSession(c.address);
    opened.push(s);
    return Object.assign(s, { id: (await s.open(60_000)).sessionId });
  };
  const revoke = (request: RevokeRequest) => unary<RevokeRequest, RevokeResponse>(rpc.revoke.bind(rpc), request);
  const describeLock = (name: string) => unary<DescribeRequest, DescribeResponse>(rpc.describe.bind(rpc), { name });

  before(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([startCoordinator(redis.url), startCoordinator(redis.url)]);
    rpc = new LockServiceClient(b.address, credentials.createInsecure());
    redisClient = new Redis(redis.url);
  });
  afterEach(() => {
    for (const o of opened.splice(0)) o.close();
  });
  after(async () => {
    rpc.close();
    redisClient.disconnect();
    await Promise.all([a.stop(), b.stop()]);
    await redis.stop();
  });

  describe("Revoke", () => {
    it("tells the holder Lost{REVOKED} on its coordinator, grants the next waiter and shows watchers 'revoked'", async () => {
      const holder = await session(a);
      const waiter = await session(b);
      const w = new RawWatch(b.address, "revoke/a");
      opened.push(w);
      await w.snapshot();
      holder.send(acquireMsg("r1", "revoke/a", { owner: "h" }));
      const token = (await holder.next("acquired")).acquired.fencingToken;
      holder.send(acquireMsg("r2", "revoke/a", { owner: "h" }));
      await holder.next("acquired");
      waiter.send(acquireMsg("r3", "revoke/a"));
      await waiter.next("queued");
      expect(await revoke({ name: "revoke/a", sessionId: holder.id, owner: "h" })).to.deep.equal({
        fencingToken: token,
        holdCount: 2,
      });
      const lost = await holder.next("lost");
      expect(lost.lost).to.deep.equal({
        name: "revoke/a",
        owner: "h",
        fencingToken: token,
        reason: LostReason.LOST_REASON_REVOKED,
      });
      expect((await waiter.next("acquired")).acquired.fencingToken).to.equal(token + 1n);
      const changes = [await w.event(), await w.event(), await w.event()].map((e) => [e.change, e.holdersLeft]);
      expect(changes).to.deep.equal([
        [HolderChange.HOLDER_CHANGE_ACQUIRED, 1],
        [HolderChange.HOLDER_CHANGE_REVOKED, 0],
        [HolderChange.HOLDER_CHANGE_ACQUIRED, 1],
      ]);
    });

    for (const [where, coordinator] of [
      ["the coordinator that runs the Revoke", () => b],
      ["another coordinator", () => a],
    ] as const) {
      it(`tells the holder Lost{REVOKED} before its waiter is granted, both served by ${where}`, async () => {
        // Holder and waiter share one session (owners differ), so one stream shows the order the server sent.
        const s = await session(coordinator());
        const order: string[] = [];
        s.stream.on("data", (r: SessionResponse) => order.push(r.kind?.$case ?? "?"));
        const name = `revoke/first-${coordinator() === a ? "a" : "b"}`;
        s.send(acquireMsg("r1", name, { owner: "h" }));
        const token = (await s.next("acquired")).acquired.fencingToken;
        s.send(acquireMsg("r2", name, { owner: "w" }));
        await s.next("queued");
        await revoke({ name, sessionId: s.id, owner: "h" });
        expect((await s.next("acquired")).acquired).to.include({ requestId: "r2", fencingToken: token + 1n });
        expect((await s.next("lost")).lost).to.include({ owner: "h", reason: LostReason.LOST_REASON_REVOKED });
        expect(order.slice(-2)).to.deep.equal(["lost", "acquired"]);
        expect(await redisClient.zrange(`turnstile:{${name}}:holders`, 0, "-1")).to.deep.equal([`${s.id}:w`]);
      });
    }

    it("leaves the revoked session without the hold: its release fails NOT_HELD and keepalives go on", async () => {
      const holder = await session(a);
      holder.send(acquireMsg("r1", "revoke/b", { owner: "h" }));
      await holder.next("acquired");
      await revoke({ name: "revoke/b", sessionId: holder.id, owner: "h" });
      await holder.next("lost");
      holder.send(releaseMsg("r2", "revoke/b", "h"));
      expect((await holder.next("failed")).failed.reason).to.equal(FailureReason.FAILURE_REASON_NOT_HELD);
      holder.send(keepAliveMsg(1));
      await holder.next("keepAliveAck");
      expect(holder.received.filter((r) => r.kind?.$case === "lost")).to.deep.equal([]);
    });

    it("fails with NOT_FOUND for a hold that does not exist, and revokes nothing", async () => {
      const holder = await session(a);
      holder.send(acquireMsg("r1", "revoke/c", { owner: "h" }));
      await holder.next("acquired");
      const err = await failureOf(revoke({ name: "revoke/c", sessionId: holder.id, owner: "someone-else" }));
      expect(err.code).to.equal(status.NOT_FOUND);
      expect(err.details).to.match(/owner "someone-else" holds no live lease on "revoke\/c"/);
      expect((await describeLock("revoke/c")).holders).to.have.length(1);
    });

    it("fails with INVALID_ARGUMENT naming the field for an empty session id", async () => {
      const err = await failureOf(revoke({ name: "revoke/d", sessionId: "", owner: "" }));
      expect([err.code, err.details]).to.deep.equal([status.INVALID_ARGUMENT, "revoke.session_id: must not be empty"]);
    });
  });

  describe("Proclaim", () => {
    it("answers Proclaimed, and Describe and watchers see the new value", async () => {
      const s = await session(a);
      const w = new RawWatch(b.address, "proclaim/a");
      opened.push(w);
      await w.snapshot();
      s.send(acquireMsg("r1", "proclaim/a", { owner: "h", value: Buffer.from("old") }));
      await s.next("acquired");
      s.send(proclaimMsg("r2", "proclaim/a", "h", "new"));
      expect((await s.next("proclaimed")).proclaimed).to.deep.equal({ requestId: "r2", name: "proclaim/a" });
      expect((await describeLock("proclaim/a")).holders[0].value.toString()).to.equal("new");
      await w.event();
      const changed = await w.event();
      expect([changed.change, changed.holder?.value.toString()]).to.deep.equal([
        HolderChange.HOLDER_CHANGE_VALUE,
        "new",
      ]);
    });

    it("fails a value over 4096 bytes with INVALID_ARGUMENT naming the field and the limit, keeping the old value", async () => {
      const s = await session(a);
      s.send(acquireMsg("r1", "proclaim/b", { owner: "h", value: Buffer.from("old") }));
      await s.next("acquired");
      s.send(proclaimMsg("r2", "proclaim/b", "h", Buffer.alloc(4097)));
      const failed = (await s.next("failed")).failed;
      expect([failed.reason, failed.message]).to.deep.equal([
        FailureReason.FAILURE_REASON_INVALID_ARGUMENT,
        "proclaim.value: 4097 bytes exceeds the maximum of 4096 bytes",
      ]);
      s.send(proclaimMsg("r3", "proclaim/b", "h", Buffer.alloc(4096, 7)));
      await s.next("proclaimed");
      expect((await describeLock("proclaim/b")).holders[0].value.length).to.equal(4096);
    });

    it("fails with INVALID_ARGUMENT naming the field for an empty request id", async () => {
      const s = await session(a);
      s.send(proclaimMsg("", "proclaim/d", "h", "x"));
      expect((await s.next("failed")).failed.message).to.equal("proclaim.request_id: must not be empty");
    });

    it("fails NOT_HELD for a lock the owner does not hold in this session", async () => {
      const s = await session(a);
      s.send(proclaimMsg("r1", "proclaim/c", "h", "x"));
      const failed = (await s.next("failed")).failed;
      expect([failed.reason, failed.message]).to.deep.equal([
        FailureReason.FAILURE_REASON_NOT_HELD,
        'proclaim: "proclaim/c" is not held by owner "h" in this session',
      ]);
    });
  });
});
