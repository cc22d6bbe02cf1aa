import { expect } from "chai";
import { pino } from "pino";
import { TurnstileClient } from "../../client/index.js";
import { Coordinator } from "../../server/coordinator.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { REDIS_FLUSH } from "../../server/store/store-marks.js";
import { READ, WRITTEN } from "../../server/tracing/wire-marks.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

/** What the coordinator read, wrote to the sessions and wrote to Redis, in order, with the turn of its event loop. */
interface Mark {
  what: "read" | "written" | "flushed";
  kind: string | undefined;
  turn: number;
}

// Each message's scripts go to Redis as soon as it is handled, end to end (real Redis, a coordinator in
// this process): the holder's release and the next contender's acquire arrive together (one client write,
// one read of the coordinator), and the script of whichever is handled first is written to Redis before the
// coordinator handles the other, not at the end of the turn. Observed through the coordinator's wire marks
// (READ, WRITTEN) and the Redis flush mark (REDIS_FLUSH), never timed. Within one tick's scripts the
// releases go first (test/store/scripts/release-first.test.ts); docs/architecture.md, Releases first,
// measures why a turn's scripts are no longer held to put its releases in front.
describe("releases first: each message's scripts are written to Redis before the next message is handled", () => {
  let redis: TestRedis;
  let coordinator: Coordinator;
  const clients: TurnstileClient[] = [];

  before(async () => {
    redis = await startRedis();
    coordinator = new Coordinator({
      store: new RedisStore({ url: redis.url }),
      log: pino({ level: process.env.TEST_LOG ?? "silent" }),
      listen: "127.0.0.1:0",
      shutdownGraceMs: 200,
    });
    const address = `127.0.0.1:${await coordinator.start()}`;
    // One process: grpc-js puts the three clients' sessions on one HTTP/2 connection.
    for (let i = 0; i < 3; i++) clients.push(new TurnstileClient(address, { ttlMs: 30_000 }));
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await coordinator?.stop();
    await redis?.stop();
  });

  it("writes the first message's script before reading the second when a release and an acquire arrive in one turn", async () => {
    const [holder, waiter, next] = clients;
    // Sessions are opened on demand: open each one first, so that an acquire is one message.
    for (const c of clients) await (await c.acquire("release-first/warm-up")).release();
    // Whether both requests reach the coordinator in one read is up to the sockets: try until it happened
    // a few times, and check the order every time it did.
    let together = 0;
    for (let attempt = 0; attempt < 30 && together < 3; attempt++) {
      const name = `release-first/${attempt}`;
      const held = await holder.acquire(name);
      const waiting = waiter.acquire(name);
      await waitForQueue(redis.url, name, 1);
      const marks: Mark[] = [];
      let turn = 0;
      let counting = true;
      const tick = () => {
        turn++;
        if (counting) setImmediate(tick);
      };
      setImmediate(tick);
      let allWritten!: () => void;
      const written = new Promise<void>((resolve) => {
        allWritten = resolve;
      });
      const onRead = (m: unknown) => {
        marks.push({ what: "read", kind: (m as { kind?: { $case: string } }).kind?.$case, turn });
      };
      const onWritten = (m: unknown) => {
        const kind = (m as { kind?: { $case: string } }).kind?.$case;
        marks.push({ what: "written", kind, turn });
        if (marks.filter((k) => k.what === "written").length === 3) allWritten();
      };
      const onFlushed = () => {
        marks.push({ what: "flushed", kind: undefined, turn });
      };
      READ.subscribe(onRead);
      WRITTEN.subscribe(onWritten);
      REDIS_FLUSH.subscribe(onFlushed);
      let asking!: Promise<{ release(): Promise<void> }>;
      try {
        // The next contender asks and the holder lets go in the same turn, as in a busy fleet.
        asking = next.acquire(name);
        await held.release();
        // Queued for the contender, Acquired for the waiter, Released for the holder.
        await written;
      } finally {
        READ.unsubscribe(onRead);
        WRITTEN.unsubscribe(onWritten);
        REDIS_FLUSH.unsubscribe(onFlushed);
        counting = false;
      }
      await (await waiting).release();
      await (await asking).release();
      const reads = marks.filter((m) => m.what === "read");
      expect(reads.map((m) => m.kind).sort()).to.deep.equal(["acquire", "release"]);
      if (reads[0].turn !== reads[1].turn) continue;
      together++;
      const order = marks.map((m) => m.kind ?? m.what);
      expect(order, `attempt ${attempt}: what the coordinator did, in order`).to.have.members([
        reads[0].kind,
        "flushed",
        reads[1].kind,
        "flushed",
        "acquired",
        "released",
        "queued",
      ]);
      expect(order.slice(0, 4), `attempt ${attempt}: ${JSON.stringify(order)}`).to.deep.equal([
        reads[0].kind,
        "flushed",
        reads[1].kind,
        "flushed",
      ]);
    }
    expect(together, "attempts whose release and acquire were read in one turn").to.be.at.least(1);
  });
});
