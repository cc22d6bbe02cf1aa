import { expect } from "chai";
import { Redis } from "ioredis";
import { type Lock, TurnstileClient, TurnstileError } from "../../client/index.js";
import { lockKeys } from "../../server/store/redis/records/lock-keys.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

/** Tracks whether a pending acquire has resolved yet, without awaiting it. */
function track(acquiring: Promise<Lock>): { promise: Promise<Lock>; granted: () => boolean } {
  let granted = false;
  const promise = acquiring.then((lock) => {
    granted = true;
    return lock;
  });
  return { promise, granted: () => granted };
}

describe("ReadWriteLock", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  let admin: Redis;
  const clients: TurnstileClient[] = [];
  const client = () => {
    const c = new TurnstileClient(coord.address, { ttlMs: 10_000 });
    clients.push(c);
    return c;
  };

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
    admin = new Redis(redis.url);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  });
  after(async () => {
    admin.disconnect();
    await coord.stop();
    await redis.stop();
  });

  // A release grants inside its script, before it is answered: after it, the queue is exact.
  const queued = (name: string) => admin.zrange(lockKeys("turnstile", name)[2], 0, "-1");

  it("lets readers share, queues a writer behind them, and makes later readers wait for the writer", async () => {
    const name = "rw/fifo";
    const r1 = await client().readWriteLock(name).read();
    const r2 = await client().readWriteLock(name).read();
    expect(r2.fencingToken).to.equal(r1.fencingToken + 1n);
    expect(await client().readWriteLock(name).tryWrite()).to.equal(null);

    const writer = track(client().readWriteLock(name).write());
    await waitForQueue(redis.url, name, 1);
    const r3 = track(client().readWriteLock(name).read());
    // In the queue means not granted: acquire.lua answers one or the other, atomically.
    await waitForQueue(redis.url, name, 2);
    expect(await client().readWriteLock(name).tryRead()).to.equal(null);

    const [writerId, r3Id] = await queued(name);
    await r1.release();
    expect(await queued(name)).to.deep.equal([writerId, r3Id]);
    await r2.release();
    expect(await queued(name)).to.deep.equal([r3Id]);
    const w = await writer.promise;
    expect(w.fencingToken > r2.fencingToken).to.equal(true);
    expect(r3.granted()).to.equal(false);

    await w.release();
    const read = await r3.promise;
    expect(read.fencingToken).to.equal(w.fencingToken + 1n);
    await read.release();
  });

  it("grants consecutive waiting readers together when the writer releases", async () => {
    const name = "rw/batch";
    const w = await client().readWriteLock(name).write();
    const readers = [track(client().readWriteLock(name).read()), track(client().readWriteLock(name).read())];
    await waitForQueue(redis.url, name, 2);
    const w2 = track(client().readWriteLock(name).write());
    await waitForQueue(redis.url, name, 3);
    await w.release();
    expect(await queued(name)).to.have.length(1);
    const held = await Promise.all(readers.map((r) => r.promise));
    expect(w2.granted()).to.equal(false);
    for (const r of held) await r.release();
    await (await w2.promise).release();
  });

  it("refuses to upgrade a read hold to write for the same owner with 'conflict', keeping the read hold", async () => {
    const c = client();
    const rw = c.readWriteLock("rw/upgrade");
    const read = await rw.read({ owner: "o" });
    const err = await rw.write({ owner: "o" }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(TurnstileError);
    expect((err as TurnstileError).reason).to.equal("conflict");
    expect((err as TurnstileError).message).to.match(/acquire\.mode: upgrading a SHARED hold .* is refused/);
    expect(read.signal.aborted).to.equal(false);
    expect(await client().readWriteLock("rw/upgrade").tryWrite()).to.equal(null);
    await read.release();
    const write = await rw.write({ owner: "o" });
    await write.release();
  });

  it("lets a writer read with the same owner as a re-entry: same token, the hold stays exclusive", async () => {
    const rw = client().readWriteLock("rw/downgrade");
    const write = await rw.write({ owner: "o" });
    const read = await rw.read({ owner: "o" });
    expect([read.fencingToken, read.holdCount]).to.deep.equal([write.fencingToken, 2]);
    await write.release();
    expect(await client().readWriteLock("rw/downgrade").tryRead()).to.equal(null);
    await read.release();
    const other = await client().readWriteLock("rw/downgrade").tryRead();
    expect(other).to.not.equal(null);
    await other?.release();
  });

  it("runs withRead and withWrite under the hold and releases it after", async () => {
    const rw = client().readWriteLock("rw/with");
    const inside = await rw.withRead(async (lock) => {
      expect(await client().readWriteLock("rw/with").tryWrite()).to.equal(null);
      return lock.signal.aborted;
    });
    expect(inside).to.equal(false);
    expect(await rw.withWrite(() => "done")).to.equal("done");
    expect(await client().readWriteLock("rw/with").tryWrite()).to.not.equal(null);
  });
});
