import { Socket } from "node:net";
import { expect } from "chai";
import { Redis } from "ioredis";
import { GrantOutbox } from "../../server/store/redis/writes/grant-outbox.js";
import type { Claim, Grant } from "../../server/store/store.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";

describe("GrantOutbox.acknowledged()", () => {
  let server: TestRedis;
  let redis: Redis;

  before(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
  });
  after(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it("delivers the grants held on the acknowledged connection and keeps other open connections' for their own WAIT", () => {
    const delivered: Grant[] = [];
    const outbox = new GrantOutbox(redis, "turnstile", (g) => delivered.push(g));
    // Two masters' connections (Redis Cluster); grants to this coordinator's own waiters need no publish.
    const [a, b] = [new Socket(), new Socket()];
    outbox.hold(a, "x", ["aa01:r1", "4294967297"]);
    outbox.hold(b, "y", ["bb02:r2", "8589934593"]);
    outbox.acknowledged(a);
    expect(delivered.map((g) => [g.name, g.sessionId, g.token])).to.deep.equal([["x", "aa01", 4294967297n]]);
    outbox.acknowledged(b);
    expect(delivered.map((g) => g.name)).to.deep.equal(["x", "y"]);
    outbox.acknowledged(b);
    expect(delivered).to.have.length(2);
  });

  it("drops the grants of a connection that closed: the waiter's re-check finds what the new master kept", () => {
    const delivered: Grant[] = [];
    const outbox = new GrantOutbox(redis, "turnstile", (g) => delivered.push(g));
    const [old, current] = [new Socket(), new Socket()];
    outbox.hold(old, "x", ["aa01:r1", "1"]);
    old.destroy();
    outbox.acknowledged(current);
    expect(delivered).to.deep.equal([]);
    // Gone for good, not delivered by a later WAIT either.
    outbox.acknowledged(old);
    expect(delivered).to.deep.equal([]);
  });
});

describe("GrantOutbox: acquire-set members a hand-on passed over (token '')", () => {
  it("routes them to retrySet, from a script's reply and from the grant channel, never as grants", () => {
    const delivered: Grant[] = [];
    const retried: Omit<Claim, "owner">[] = [];
    const outbox = new GrantOutbox(
      {} as Redis,
      "turnstile",
      (g) => delivered.push(g),
      (w) => retried.push(w),
    );
    outbox.deliver("x", ["aa01:set", "", "bb02:r2", "7"]);
    outbox.received("cc03:set2\n\ny");
    expect(delivered.map((g) => [g.name, g.sessionId, g.token])).to.deep.equal([["x", "bb02", 7n]]);
    expect(retried).to.deep.equal([
      { name: "x", sessionId: "aa01", requestId: "set" },
      { name: "y", sessionId: "cc03", requestId: "set2" },
    ]);
  });
});
