import { expect } from "chai";
import { pino } from "pino";
import { TurnstileClient } from "../../client/index.js";
import { Coordinator } from "../../server/coordinator.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { READ, WRITTEN } from "../../server/tracing/wire-marks.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

/** What the coordinator read and wrote, in order, with the turn of its event loop each happened in. */
interface Mark {
  what: "read" | "written";
  kind: string | undefined;
  turn: number;
}

// Releases first, end to end (real Redis, a coordinator in this process): the holder's release and the
// next contender's acquire arrive together (one client write, one read of the coordinator) and the waiter's
// grant is the first reply the coordinator writes, before the contender's Queued and the holder's Released.
// Observed through the coordinator's wire marks (READ, WRITTEN), never timed. The release's script is
// written ahead of the acquire's in the turn's one Redis write (test/store/scripts/release-first.test.ts), so
// its reply, and the grant written synchronously in its continuation, come first.
describe("releases first: a release read with an acquire is granted before anything else is written", () => {
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

  it("writes the waiter's Acquired first whenever the release and the re-acquire were read in one turn", async () => {
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
      let queuedWritten!: () => void;
      const queued = new Promise<void>((resolve) => {
        queuedWritten = resolve;
      });
      const onRead = (m: unknown) => {
        marks.push({ what: "read", kind: (m as { kind?: { $case: string } }).kind?.$case, turn });
      };
      const onWritten = (m: unknown) => {
        const kind = (m as { kind?: { $case: string } }).kind?.$case;
        marks.push({ what: "written", kind, turn });
        if (kind === "queued") queuedWritten();
      };
      READ.subscribe(onRead);
      WRITTEN.subscribe(onWritten);
      let asking!: Promise<{ release(): Promise<void> }>;
      try {
        // The next contender asks and the holder lets go in the same turn, as in a busy fleet.
        asking = next.acquire(name);
        const releasing = held.release();
        await releasing;
        // The contender queues behind the waiter, who holds the lock until it has been told Queued.
        await queued;
      } finally {
        READ.unsubscribe(onRead);
        WRITTEN.unsubscribe(onWritten);
        counting = false;
      }
      await (await waiting).release();
      await (await asking).release();
      const reads = marks.filter((m) => m.what === "read");
      expect(reads.map((m) => m.kind).sort()).to.deep.equal(["acquire", "release"]);
      if (reads[0].turn !== reads[1].turn) continue;
      together++;
      const written = marks.filter((m) => m.what === "written").map((m) => m.kind);
      expect(written, `attempt ${attempt}: the coordinator's writes, in order`).to.have.members([
        "acquired",
        "released",
        "queued",
      ]);
      expect(written[0], `attempt ${attempt}: the first write of ${JSON.stringify(written)}`).to.equal("acquired");
    }
    expect(together, "attempts whose release and acquire were read in one turn").to.be.at.least(1);
  });
});
