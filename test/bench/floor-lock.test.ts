import { Client, type ClientDuplexStream, credentials } from "@grpc/grpc-js";
import { expect } from "chai";
import { Redis } from "ioredis";
import { rawBytes } from "../../bench/env/raw-bytes-server.js";
import { type FloorLockProcess, startFloorLock } from "../../bench/floor-lock/floor-lock-process.js";
import {
  FLOOR_LOCK_PATH,
  floorRequest,
  GRANTED,
  OP_ACQUIRE,
  OP_RELEASE,
  QUEUED,
  RELEASED,
} from "../../bench/floor-lock/floor-lock-wire.js";
import { floorLockImpl } from "../../bench/impls/floor-lock-impl.js";
import type { HeldLock, LockClient } from "../../bench/impls/lock-impl.js";
import { MessageInbox } from "../harness/message-inbox.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";

describe("the bench's floor lock", () => {
  let redis: TestRedis;
  let floor: FloorLockProcess;
  let counter: Redis;
  const clients: LockClient[] = [];

  before(async () => {
    redis = await startRedis();
    floor = await startFloorLock(redis.url);
    counter = new Redis(redis.url);
  });
  after(async () => {
    for (const c of clients) await c.close();
    counter.disconnect();
    await floor.stop();
    await redis.stop();
  });

  const evalshaCalls = async () =>
    Number(/cmdstat_evalsha:calls=(\d+)/.exec(await counter.info("commandstats"))?.[1] ?? 0);

  it("hands the lock to the longest waiter, one EVALSHA per request", async () => {
    const impl = floorLockImpl(floor.address);
    for (let i = 0; i < 3; i++) clients.push(await impl.connect());
    const [a, b, c] = clients;
    const before = await evalshaCalls();
    const held = await a.acquire("fifo");
    const order: string[] = [];
    // The clients share one HTTP/2 connection: b's request reaches the server, and its EVALSHA Redis, first.
    const granted = (who: string) => (l: HeldLock) => {
      order.push(who);
      return l;
    };
    const waitB = b.acquire("fifo").then(granted("b"));
    const waitC = c.acquire("fifo").then(granted("c"));
    // Both are queued once the server has run their scripts.
    while ((await evalshaCalls()) - before < 3) await new Promise(setImmediate);
    await held.release();
    const heldB: HeldLock = await waitB;
    expect(order).to.deep.equal(["b"]);
    await heldB.release();
    await (await waitC).release();
    expect(order).to.deep.equal(["b", "c"]);
    // 3 acquires and 3 releases: 6 requests, 6 scripts.
    expect((await evalshaCalls()) - before).to.equal(6);
  });

  it("started with --queued, answers a waiting acquire Queued before its grant, and the holder nothing more", async () => {
    const queued = await startFloorLock(redis.url, true);
    const client = new Client(queued.address, credentials.createInsecure());
    const open = () => {
      const call: ClientDuplexStream<Buffer, Buffer> = client.makeBidiStreamRequest(
        FLOOR_LOCK_PATH,
        rawBytes,
        rawBytes,
      );
      const inbox = new MessageInbox<number>();
      call.on("data", (m: Buffer) => inbox.push(m[0]));
      call.on("error", () => {});
      return { call, inbox };
    };
    try {
      const holder = open();
      const waiter = open();
      holder.call.write(floorRequest(OP_ACQUIRE, "queued"));
      expect(await holder.inbox.next(2000, "holder's grant")).to.equal(GRANTED[0]);
      waiter.call.write(floorRequest(OP_ACQUIRE, "queued"));
      expect(await waiter.inbox.next(2000, "waiter's Queued")).to.equal(QUEUED[0]);
      holder.call.write(floorRequest(OP_RELEASE, "queued"));
      expect(await waiter.inbox.next(2000, "waiter's grant")).to.equal(GRANTED[0]);
      expect(await holder.inbox.next(2000, "holder's release answer")).to.equal(RELEASED[0]);
      waiter.call.write(floorRequest(OP_RELEASE, "queued"));
      expect(await waiter.inbox.next(2000, "waiter's release answer")).to.equal(RELEASED[0]);
      holder.call.end();
      waiter.call.end();
    } finally {
      client.close();
      await queued.stop();
    }
  });
});
