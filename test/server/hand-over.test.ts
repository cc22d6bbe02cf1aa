import { credentials, status } from "@grpc/grpc-js";
import { expect } from "chai";
import {
  type DescribeRequest,
  type DescribeResponse,
  FailureReason,
  HolderChange,
  LockServiceClient,
  type RequestReleaseRequest,
  type RequestReleaseResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { RawSession } from "../harness/raw-session.js";
import { RawWatch } from "../harness/raw-watch.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, releaseMsg, requestReleaseMsg, transferMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { failureOf, unary } from "../harness/unary.js";

/** Transfer, RequestRelease and priority on the wire, across two coordinators on one Redis (docs/elections.md). */
describe("Hand-over on the session stream: Transfer, RequestRelease, priority", () => {
  let redis: TestRedis;
  let a: TestCoordinator;
  let b: TestCoordinator;
  let rpc: LockServiceClient;
  const opened: { close(): void }[] = [];
  const session = async (c: TestCoordinator) => {
    const s = new RawSession(c.address);
    opened.push(s);
    return Object.assign(s, { id: (await s.open(60_000)).sessionId });
  };
  const describeLock = (name: string) => unary<DescribeRequest, DescribeResponse>(rpc.describe.bind(rpc), { name });
  const askRelease = (request: RequestReleaseRequest) =>
    unary<RequestReleaseRequest, RequestReleaseResponse>(rpc.requestRelease.bind(rpc), request);

  before(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([startCoordinator(redis.url), startCoordinator(redis.url)]);
    rpc = new LockServiceClient(b.address, credentials.createInsecure());
  });
  afterEach(() => {
    for (const o of opened.splice(0)) o.close();
  });
  after(async () => {
    rpc.close();
    await Promise.all([a.stop(), b.stop()]);
    await redis.stop();
  });

  it("transfers to a named waiter on another coordinator: Transferred, its Acquired with a higher token, one watch change", async () => {
    const holder = await session(a);
    const head = await session(a);
    const successor = await session(b);
    const watch = new RawWatch(b.address, "ho/a");
    opened.push(watch);
    await watch.snapshot();
    holder.send(acquireMsg("r1", "ho/a", { owner: "h" }));
    const token = (await holder.next("acquired")).acquired.fencingToken;
    head.send(acquireMsg("r2", "ho/a"));
    await head.next("queued");
    successor.send(acquireMsg("r3", "ho/a", { owner: "new", value: Buffer.from("v2") }));
    await successor.next("queued");
    holder.send(transferMsg("t1", "ho/a", "h", { sessionId: successor.id, owner: "new" }));
    const transferred = (await holder.next("transferred")).transferred;
    expect(transferred).to.deep.equal({
      requestId: "t1",
      name: "ho/a",
      toSessionId: successor.id,
      toOwner: "new",
      fencingToken: token + 1n,
    });
    expect((await successor.next("acquired")).acquired).to.include({ requestId: "r3", fencingToken: token + 1n });
    await watch.event(); // acquired by the holder
    const change = await watch.event();
    expect([change.change, change.holdersLeft, change.noHolder]).to.deep.equal([
      HolderChange.HOLDER_CHANGE_TRANSFERRED,
      1,
      false,
    ]);
    expect([change.holder?.sessionId, change.holder?.owner, change.from?.sessionId, change.from?.owner]).to.deep.equal([
      successor.id,
      "new",
      holder.id,
      "h",
    ]);
    // The old holder no longer holds: its release is refused.
    holder.send(releaseMsg("r4", "ho/a", "h"));
    expect((await holder.next("failed")).failed.reason).to.equal(FailureReason.FAILURE_REASON_NOT_HELD);
    const state = await describeLock("ho/a");
    expect(state.holders.map((h) => h.sessionId)).to.deep.equal([successor.id]);
    expect(state.waiters.map((w) => w.sessionId)).to.deep.equal([head.id]);
  });

  it("fails NOT_FOUND naming who does wait when the successor does not; the holder keeps the lock", async () => {
    const holder = await session(a);
    const waiter = await session(b);
    holder.send(acquireMsg("r1", "ho/b", { owner: "h" }));
    await holder.next("acquired");
    waiter.send(acquireMsg("r2", "ho/b", { owner: "w" }));
    await waiter.next("queued");
    holder.send(transferMsg("t1", "ho/b", "h", { sessionId: "0123456789abcdef0123456789abcdef" }));
    const failed = (await holder.next("failed")).failed;
    expect(failed.reason).to.equal(FailureReason.FAILURE_REASON_NOT_FOUND);
    expect(failed.message).to.equal(
      `transfer: session "0123456789abcdef0123456789abcdef" is not waiting for "ho/b"; waiting: session "${waiter.id}" owner "w"`,
    );
    expect((await describeLock("ho/b")).holders.map((h) => h.sessionId)).to.deep.equal([holder.id]);
  });

  it("refuses bad fields naming them: a to_session_id that is no session id, to_owner without it", async () => {
    const holder = await session(a);
    holder.send(transferMsg("t1", "ho/c", "h", { sessionId: "x:y" }));
    expect((await holder.next("failed")).failed.message).to.match(/^transfer\.to_session_id: not a session id/);
    holder.send(transferMsg("t2", "ho/c", "h", { owner: "o" }));
    expect((await holder.next("failed")).failed.message).to.match(/^transfer\.to_owner: must be empty/);
    holder.send(acquireMsg("r3", "ho/c", { priority: 101 }));
    expect((await holder.next("failed")).failed.message).to.equal(
      "acquire.priority: 101 is outside the allowed range 0..100",
    );
  });

  it("delivers a session's RequestRelease to the holder on another coordinator; Describe shows it", async () => {
    const holder = await session(a);
    const asker = await session(b);
    holder.send(acquireMsg("r1", "ho/d", { owner: "h" }));
    await holder.next("acquired");
    asker.send(requestReleaseMsg("q1", "ho/d", "new version ready"));
    expect((await asker.next("releaseRequestSent")).releaseRequestSent).to.deep.equal({
      requestId: "q1",
      name: "ho/d",
      holders: 1,
    });
    expect((await holder.next("releaseRequested")).releaseRequested).to.deep.equal({
      name: "ho/d",
      owner: "h",
      requester: `session ${asker.id}`,
      reason: "new version ready",
    });
    const [described] = (await describeLock("ho/d")).holders;
    expect(described.releaseRequest).to.deep.include({ requester: `session ${asker.id}`, reason: "new version ready" });
    asker.send(requestReleaseMsg("q2", "ho/nobody", ""));
    expect((await asker.next("failed")).failed.reason).to.equal(FailureReason.FAILURE_REASON_NOT_FOUND);
  });

  it("lets an operator ask through the RequestRelease call; NOT_FOUND when nobody holds", async () => {
    const holder = await session(a);
    holder.send(acquireMsg("r1", "ho/e", { owner: "h" }));
    await holder.next("acquired");
    expect(await askRelease({ name: "ho/e", reason: "maintenance" })).to.deep.equal({ holders: 1 });
    expect((await holder.next("releaseRequested")).releaseRequested).to.include({
      requester: "operator",
      reason: "maintenance",
    });
    expect((await failureOf(askRelease({ name: "ho/none", reason: "" }))).code).to.equal(status.NOT_FOUND);
  });

  it("queues by priority: Queued positions and Describe's waiters show it", async () => {
    const holder = await session(a);
    const low = await session(b);
    const high = await session(a);
    holder.send(acquireMsg("r1", "ho/f"));
    await holder.next("acquired");
    low.send(acquireMsg("r2", "ho/f"));
    expect((await low.next("queued")).queued.position).to.equal(1);
    high.send(acquireMsg("r3", "ho/f", { priority: 7 }));
    expect((await high.next("queued")).queued.position).to.equal(1);
    const waiters = (await describeLock("ho/f")).waiters.map((w) => [w.sessionId, w.priority, w.position]);
    expect(waiters).to.deep.equal([
      [high.id, 7, 1],
      [low.id, 0, 2],
    ]);
    holder.send(releaseMsg("r4", "ho/f", "r1"));
    await high.next("acquired");
  });
});
