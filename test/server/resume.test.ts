import { status } from "@grpc/grpc-js";
import { expect } from "chai";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, releaseMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

describe("session resume (server side)", () => {
  let redis: TestRedis;
  let one: TestCoordinator;
  let two: TestCoordinator;
  const open: RawSession[] = [];
  const stream = (c: TestCoordinator) => {
    const s = new RawSession(c.address);
    open.push(s);
    return s;
  };
  const session = async (c: TestCoordinator, ttlMs = 30_000) => {
    const s = stream(c);
    return { s, opened: await s.open(ttlMs) };
  };

  before(async () => {
    redis = await startRedis();
    one = await startCoordinator(redis.url);
    two = await startCoordinator(redis.url);
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  after(async () => {
    await one.stop();
    await two.stop();
    await redis.stop();
  });

  it("resumes on another coordinator with the same token, and a re-sent acquire completes there", async () => {
    const { s: a, opened } = await session(one);
    const { s: other } = await session(two);
    a.send(acquireMsg("x", "resume/held", { owner: "me" }));
    const held = (await a.next("acquired")).acquired;
    other.send(acquireMsg("o", "resume/wanted"));
    await other.next("acquired");
    a.send(acquireMsg("w", "resume/wanted", { owner: "me" }));
    await a.next("queued");
    a.close();

    const b = stream(two);
    const claim = { name: "resume/held", owner: "me", fencingToken: held.fencingToken, holdCount: 1 };
    b.sendOpen(30_000, { sessionId: opened.sessionId, secret: opened.resumeSecret, held: [claim] });
    const resumed = (await b.next("opened")).opened;
    expect([resumed.sessionId, resumed.resumed]).to.deep.equal([opened.sessionId, true]);
    expect(resumed.held).to.deep.equal([claim]);
    const thief = stream(one);
    await thief.open();
    thief.send(acquireMsg("t", "resume/held", { waitMs: 0 }));
    await thief.next("failed");
    b.send(acquireMsg("w", "resume/wanted", { owner: "me" }));
    await b.next("queued");
    other.send(releaseMsg("r", "resume/wanted", "o"));
    await b.next("acquired", (x) => x.acquired.requestId === "w");
  });

  it("answers a re-sent acquire that was granted while the stream was down with the same grant", async () => {
    const { s: a, opened } = await session(one);
    const { s: holder } = await session(one);
    holder.send(acquireMsg("h", "resume/raced"));
    await holder.next("acquired");
    a.send(acquireMsg("w", "resume/raced", { owner: "me" }));
    await a.next("queued");
    a.close();
    holder.send(releaseMsg("r", "resume/raced", "h"));
    await holder.next("released");
    const b = stream(two);
    b.sendOpen(30_000, { sessionId: opened.sessionId, secret: opened.resumeSecret });
    await b.next("opened");
    b.send(acquireMsg("w", "resume/raced", { owner: "me" }));
    const granted = (await b.next("acquired")).acquired;
    expect(granted.holdCount).to.equal(1);
    b.send(releaseMsg("r2", "resume/raced", "me"));
    expect((await b.next("released")).released.holdCount).to.equal(0);
  });

  it("refuses a wrong secret with UNAUTHENTICATED and leaves the session untouched", async () => {
    const { s: a, opened } = await session(one);
    a.send(acquireMsg("x", "resume/secret"));
    await a.next("acquired");
    const b = stream(two);
    b.sendOpen(30_000, { sessionId: opened.sessionId, secret: "wrong" });
    expect((await b.status()).code).to.equal(status.UNAUTHENTICATED);
    a.send(acquireMsg("y", "resume/secret-2"));
    await a.next("acquired");
  });

  it("ends a resume of an unknown or expired session with NOT_FOUND", async () => {
    const b = stream(two);
    b.sendOpen(30_000, { sessionId: "00".repeat(16), secret: "x" });
    const st = await b.status();
    expect(st.code).to.equal(status.NOT_FOUND);
    expect(st.details).to.match(/unknown or expired/);
  });

  it("drains a coordinator without touching the store: queue places and holds survive the resume", async () => {
    const three = await startCoordinator(redis.url);
    try {
      const { s: holder } = await session(two);
      holder.send(acquireMsg("h", "resume/drain"));
      await holder.next("acquired");
      const { s: a, opened } = await session(three);
      a.send(acquireMsg("w", "resume/drain", { owner: "me" }));
      await a.next("queued");
      const { s: later } = await session(two);
      later.send(acquireMsg("l", "resume/drain"));
      expect((await later.next("queued")).queued.position).to.equal(2);
      await three.stop();
      const st = await a.status();
      expect([st.code, st.details]).to.deep.equal([
        status.UNAVAILABLE,
        "coordinator draining: resume on another coordinator",
      ]);
      const b = stream(one);
      b.sendOpen(30_000, { sessionId: opened.sessionId, secret: opened.resumeSecret });
      await b.next("opened");
      b.send(acquireMsg("w", "resume/drain", { owner: "me" }));
      expect((await b.next("queued")).queued.position).to.equal(1);
      holder.send(releaseMsg("r", "resume/drain", "h"));
      await b.next("acquired");
    } finally {
      await three.stop().catch(() => {});
    }
  });
});
