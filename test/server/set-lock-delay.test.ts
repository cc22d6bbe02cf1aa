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
import { acquireAllMsg, releaseMsg } from "../harness/requests.js";
import { unary } from "../harness/unary.js";
import { until } from "../harness/until.js";

// Lock-delay of acquire-sets over the wire (real Redis, real coordinator): every hold a set is granted
// carries the set's lock-delay (the request's, else the serve default per name), as a single acquire's.
describe("lock-delay of acquire-sets", () => {
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
  const delayOf = async (name: string) => {
    const delay = (await describeLock(name)).delayRemaining;
    return delay && wholeMsFromDuration(delay);
  };
  /** Revokes the one hold of `name` (owner "h"). */
  const revokeHold = async (name: string) => {
    const { sessionId } = (await describeLock(name)).holders[0];
    await revoke({ name, sessionId, owner: "h" });
  };

  before(async () => {
    redis = await startRedis();
    coordinator = new Coordinator({
      store: new RedisStore({ url: redis.url }),
      log: pino({ level: process.env.TEST_LOG ?? "silent" }),
      listen: "127.0.0.1:0",
      shutdownGraceMs: 200,
      // The serve default (--lock-delay) for names under "defaulted/".
      lockDelays: { "defaulted/": 30_000 },
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

  it("delays only the revoked name of a set granted with a delay; the others hand on at once", async () => {
    const names = ["set/a", "set/b", "set/c"];
    const set = await client().acquireAll(names, { owner: "h", lockDelayMs: 30_000 });
    await revokeHold("set/a");
    expect(set.lock("set/a").lost).to.equal(true);
    expect(set.lock("set/c").lost).to.equal(false);
    expect(await delayOf("set/a")).to.be.within(1, 30_000);
    const other = client();
    expect(await other.tryAcquire("set/a")).to.equal(null);
    await set.lock("set/b").release();
    const b = await other.tryAcquire("set/b");
    expect(b?.fencingToken).to.be.a("bigint");
    expect(await delayOf("set/b")).to.equal(undefined);
    expect(await delayOf("set/c")).to.equal(undefined);
  });

  it("delays the name of a set hold whose lease ran out (session lost), from the lease's end", async () => {
    const holder = new RawSession(address);
    raw.push(holder);
    await holder.open(1000);
    holder.send(acquireAllMsg("set", ["lost/x", "lost/y"], undefined, 1500));
    await holder.next("acquiredAll");
    // y is released cleanly; then the session is lost and x's lease runs out on its own.
    holder.send(releaseMsg("r", "lost/y", "o"));
    await holder.next("released");
    holder.close();
    // A waiter on x: the coordinator's re-check at the lease's end purges the hold (Describe only reads).
    const waiting = client().acquire("lost/x", { waitMs: 10_000 });
    await until(async () => (await describeLock("lost/x")).delayRemaining !== undefined, "x to be delayed");
    expect(await delayOf("lost/x")).to.be.within(1, 1500);
    expect(await client().tryAcquire("lost/x")).to.equal(null);
    expect(await client().tryAcquire("lost/y")).to.not.equal(null);
    // The re-check at the delay's end grants the waiter.
    const x = await waiting;
    expect(await delayOf("lost/x")).to.equal(undefined);
    await x.release();
  });

  it("applies the serve default per name to a set that sets none; 0 turns it off", async () => {
    const defaulted = await client().acquireAll(["defaulted/a", "plain/a"], { owner: "h" });
    const off = await client().acquireAll(["defaulted/b"], { owner: "h", lockDelayMs: 0 });
    for (const name of ["defaulted/a", "plain/a", "defaulted/b"]) await revokeHold(name);
    expect(defaulted.lock("plain/a").lost).to.equal(true);
    expect(off.lock("defaulted/b").lost).to.equal(true);
    expect(await delayOf("defaulted/a")).to.be.within(1, 30_000);
    expect(await delayOf("plain/a")).to.equal(undefined);
    expect(await delayOf("defaulted/b")).to.equal(undefined);
  });

  it("refuses a set's delay over 60 s with INVALID_ARGUMENT naming acquire_all.lock_delay and the limit", async () => {
    const error = await client()
      .acquireAll(["bad/a", "bad/b"], { lockDelayMs: 61_000 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).to.be.instanceOf(TurnstileError);
    expect((error as TurnstileError).reason).to.equal("invalid-argument");
    expect((error as TurnstileError).message)
      .to.include("acquire_all.lock_delay")
      .and.include("60000 ms");
    expect((await describeLock("bad/a")).holders).to.deep.equal([]);
  });
});
