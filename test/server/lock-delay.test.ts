import { credentials } from "@grpc/grpc-js";
import { expect } from "chai";
import { pino } from "pino";
import { TurnstileClient, TurnstileError } from "../../client/index.js";
import {
  type DescribeRequest,
  type DescribeResponse,
  LockServiceClient,
  type RevokeRequest,
  type RevokeResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { Coordinator } from "../../server/coordinator.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { wholeMsFromDuration } from "../../wire/duration.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg } from "../harness/requests.js";
import { unary } from "../harness/unary.js";
import { until } from "../harness/until.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

// Lock-delay over the wire (real Redis, real coordinator): after a hold ends without a release the name is
// not granted again until the delay has passed; the coordinator's re-check grants the waiter at its end.
describe("lock-delay", () => {
  let redis: TestRedis;
  let coordinator: Coordinator;
  let address: string;
  let rpc: LockServiceClient;
  const clients: TurnstileClient[] = [];
  const raw: RawSession[] = [];

  const client = () => {
    const c = new TurnstileClient(address, { ttlMs: 10_000 });
    clients.push(c);
    return c;
  };
  const describeLock = (name: string) => unary<DescribeRequest, DescribeResponse>(rpc.describe.bind(rpc), { name });
  const revoke = (r: RevokeRequest) => unary<RevokeRequest, RevokeResponse>(rpc.revoke.bind(rpc), r);

  before(async () => {
    redis = await startRedis();
    coordinator = new Coordinator({
      store: new RedisStore({ url: redis.url }),
      log: pino({ level: process.env.TEST_LOG ?? "silent" }),
      listen: "127.0.0.1:0",
      shutdownGraceMs: 200,
      // The serve default (--lock-delay) for names under "defaulted/".
      lockDelays: { "defaulted/": 700 },
    });
    address = `127.0.0.1:${await coordinator.start()}`;
    rpc = new LockServiceClient(address, credentials.createInsecure());
  });
  afterEach(async () => {
    for (const s of raw.splice(0)) s.close();
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  after(async () => {
    rpc.close();
    await coordinator.stop();
    await redis.stop();
  });

  it("grants the next waiter no earlier than the lost holder's lease end + the delay, and grants it then", async () => {
    const name = "delay/expired";
    const [ttlMs, delayMs] = [1000, 1500];
    const holder = new RawSession(address);
    raw.push(holder);
    const holderSession = await holder.open(ttlMs);
    // The lease starts after this moment (on the same machine's clock as Redis's), so it ends after sentAt + ttl.
    const sentAt = Date.now();
    holder.send(acquireMsg("h1", name, { lockDelayMs: delayMs }));
    await holder.next("acquired");
    // The holder's session is lost: no keepalive, its stream gone; its lease runs out on its own.
    holder.close();
    const waiting = client().acquire(name);
    await waitForQueue(redis.url, name, 1);
    // Describe shows the delay once the lease has ended (the re-check at the lease's end purged it).
    let described: DescribeResponse | undefined;
    await until(async () => {
      described = await describeLock(name);
      return described.holders.length === 0 && described.delayRemaining !== undefined;
    }, "the delay to show in Describe");
    expect(wholeMsFromDuration(described!.delayRemaining!)).to.be.within(1, delayMs);
    expect(described!.waiters.map((w) => w.position)).to.deep.equal([1]);
    const lock = await waiting;
    const grantedAt = Date.now();
    // Redis's clock counts whole ms: 2 ms of rounding either side.
    expect(grantedAt).to.be.at.least(sentAt + ttlMs + delayMs - 2);
    expect(holderSession.sessionId).to.not.equal("");
    expect((await describeLock(name)).delayRemaining).to.equal(undefined);
    await lock.release();
  });

  it("delays the lock after a revoke: try-once is busy, the waiter is granted once the delay has passed", async () => {
    const name = "delay/revoked";
    const delayMs = 800;
    const holder = client();
    const held = await holder.acquire(name, { lockDelayMs: delayMs, owner: "h" });
    const waiting = client().acquire(name);
    await waitForQueue(redis.url, name, 1);
    const { sessionId } = (await describeLock(name)).holders[0];
    const revokedAt = Date.now();
    await revoke({ name, sessionId, owner: "h" });
    expect(await client().tryAcquire(name)).to.equal(null);
    const lock = await waiting;
    expect(Date.now()).to.be.at.least(revokedAt + delayMs - 2);
    expect(held.lost).to.equal(true);
    await lock.release();
  });

  it("answers a wait that runs out during the delay TIMEOUT, and a try-once BUSY, each naming the lock-delay", async () => {
    const name = "delay/timeout";
    const holder = client();
    await holder.acquire(name, { lockDelayMs: 30_000, owner: "h" });
    const { sessionId } = (await describeLock(name)).holders[0];
    await revoke({ name, sessionId, owner: "h" });
    const error = await client()
      .acquire(name, { waitMs: 200 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((error as TurnstileError).reason).to.equal("timeout");
    expect((error as TurnstileError).message).to.match(/waited behind the lock-delay of a hold .* \(\d+ ms left\)/);
    // A try-once is BUSY naming the delay, not "held": nobody holds the lock (issue 32).
    const busy = await client()
      .acquire(name, { waitMs: 0 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((busy as TurnstileError).reason).to.equal("busy");
    expect((busy as TurnstileError).message).to.match(
      /is delayed: a hold of it ended without a release and its lock-delay has \d+ ms left \(wait was zero: tried once\)/,
    );
  });

  it("hands on at once after a clean release, whatever the delay", async () => {
    const name = "delay/released";
    const held = await client().acquire(name, { lockDelayMs: 60_000 });
    const waiting = client().acquire(name);
    await waitForQueue(redis.url, name, 1);
    await held.release();
    const lock = await waiting;
    expect((await describeLock(name)).delayRemaining).to.equal(undefined);
    await lock.release();
  });

  it("applies the serve default for the name's prefix to an acquire that sets none; 0 turns it off", async () => {
    const defaulted = await client().acquire("defaulted/a", { owner: "h" });
    const off = await client().acquire("defaulted/b", { owner: "h", lockDelayMs: 0 });
    for (const [name, lock] of [
      ["defaulted/a", defaulted],
      ["defaulted/b", off],
    ] as const) {
      const { sessionId } = (await describeLock(name)).holders[0];
      await revoke({ name, sessionId, owner: "h" });
      expect(lock.lost).to.equal(true);
    }
    const delay = (await describeLock("defaulted/a")).delayRemaining;
    expect(delay && wholeMsFromDuration(delay)).to.be.within(1, 700);
    expect((await describeLock("defaulted/b")).delayRemaining).to.equal(undefined);
  });

  it("refuses a delay over 60 s with INVALID_ARGUMENT naming acquire.lock_delay and the limit", async () => {
    const error = await client()
      .acquire("delay/bad", { lockDelayMs: 60_001 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).to.be.instanceOf(TurnstileError);
    expect((error as TurnstileError).reason).to.equal("invalid-argument");
    expect((error as TurnstileError).message)
      .to.include("acquire.lock_delay")
      .and.include("60000 ms");
  });
});
