import { status } from "@grpc/grpc-js";
import { expect } from "chai";
import { FailureReason } from "../../gen/ts/turnstile/v1/turnstile.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, releaseMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

describe("Session stream", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  const open: RawSession[] = [];
  const session = () => {
    const s = new RawSession(coord.address);
    open.push(s);
    return s;
  };

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  after(async () => {
    await coord.stop();
    await redis.stop();
  });

  it("answers Open with a session id and the granted TTL", async () => {
    const opened = await session().open(3000);
    expect(opened.sessionId).to.match(/^[0-9a-f]{32}$/);
    expect(opened.ttl).to.deep.equal({ seconds: 3n, nanos: 0 });
  });

  it("ends the stream with FAILED_PRECONDITION when the first message is not Open", async () => {
    const s = session();
    s.send(acquireMsg("r1", "basics/no-open"));
    expect((await s.status()).code).to.equal(status.FAILED_PRECONDITION);
  });

  it("grants, queues and hands off in FIFO order with increasing tokens", async () => {
    const [a, b, c] = [session(), session(), session()];
    await Promise.all([a.open(), b.open(), c.open()]);
    a.send(acquireMsg("a1", "basics/fifo"));
    const first = await a.next("acquired");
    b.send(acquireMsg("b1", "basics/fifo"));
    expect((await b.next("queued")).queued.position).to.equal(1);
    c.send(acquireMsg("c1", "basics/fifo"));
    expect((await c.next("queued")).queued.position).to.equal(2);
    a.send(releaseMsg("a2", "basics/fifo", "a1"));
    await a.next("released");
    const second = await b.next("acquired");
    expect(second.acquired.fencingToken > first.acquired.fencingToken).to.equal(true);
    b.send(releaseMsg("b2", "basics/fifo", "b1"));
    const third = await c.next("acquired");
    expect(third.acquired.fencingToken > second.acquired.fencingToken).to.equal(true);
  });

  it("answers a try-once acquire of a held lock with BUSY", async () => {
    const [a, b] = [session(), session()];
    await Promise.all([a.open(), b.open()]);
    a.send(acquireMsg("a1", "basics/busy"));
    await a.next("acquired");
    b.send(acquireMsg("b1", "basics/busy", { waitMs: 0 }));
    expect((await b.next("failed")).failed.reason).to.equal(FailureReason.FAILURE_REASON_BUSY);
  });
});
