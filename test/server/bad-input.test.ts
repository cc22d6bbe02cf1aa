import { status } from "@grpc/grpc-js";
import { expect } from "chai";
import { FailureReason, LockMode } from "../../gen/ts/turnstile/v1/turnstile.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, cancelMsg, releaseMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

const INVALID = FailureReason.FAILURE_REASON_INVALID_ARGUMENT;

describe("bad input", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  let bystander: RawSession;
  const open: RawSession[] = [];
  const session = async () => {
    const s = new RawSession(coord.address);
    open.push(s);
    await s.open();
    return s;
  };

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url, { maxLocksPerSession: 50 });
  });
  // Every case also checks that another session's lock survives it untouched.
  beforeEach(async () => {
    bystander = await session();
    bystander.send(acquireMsg("keep", "bad/bystander"));
    await bystander.next("acquired");
  });
  afterEach(async () => {
    bystander.send(releaseMsg("rel", "bad/bystander", "keep"));
    expect((await bystander.next("released")).released.holdCount).to.equal(0);
    for (const s of open.splice(0)) s.close();
  });
  after(async () => {
    await coord.stop();
    await redis.stop();
  });

  async function failure(s: RawSession, requestId: string) {
    return (await s.next("failed", (f) => f.failed.requestId === requestId)).failed;
  }

  const names: [string, string, RegExp][] = [
    ["an empty name", "", /acquire\.name: must not be empty/],
    ["a name over 256 bytes", "x".repeat(257), /acquire\.name: 257 bytes exceeds the maximum of 256 bytes/],
    ["a name with a control character", "bad\nname", /acquire\.name: must not contain control characters/],
  ];
  for (const [what, name, message] of names) {
    it(`fails an acquire with ${what} with INVALID_ARGUMENT naming the field and limit`, async () => {
      const s = await session();
      s.send(acquireMsg("r1", name));
      const f = await failure(s, "r1");
      expect(f.reason).to.equal(INVALID);
      expect(f.message).to.match(message);
    });
  }

  it("echoes an over-long request id and name in the Failed cut to their limits, not as sent", async () => {
    const s = await session();
    s.send(acquireMsg("r".repeat(20_000), "n".repeat(20_000)));
    const f = (await s.next("failed")).failed;
    expect([f.reason, f.requestId, f.name]).to.deep.equal([INVALID, "r".repeat(128), "n".repeat(256)]);
    // A multi-byte character that would straddle the limit is left out whole.
    s.send(acquireMsg("r2", `${"n".repeat(255)}\u00e9${"n".repeat(300)}`));
    expect((await failure(s, "r2")).name).to.equal("n".repeat(255));
  });

  it("fails an acquire with a wait over the maximum, naming acquire.wait and the limit", async () => {
    const s = await session();
    s.send(acquireMsg("r1", "bad/wait", { waitMs: 86_400_001 }));
    const f = await failure(s, "r1");
    expect([f.reason, f.message]).to.deep.equal([
      INVALID,
      "acquire.wait: 86400001 ms exceeds the maximum of 86400000 ms (omit it to wait forever)",
    ]);
  });

  it("fails an acquire with an unknown mode value", async () => {
    const s = await session();
    s.send(acquireMsg("r1", "bad/mode", { mode: 7 as LockMode }));
    const f = await failure(s, "r1");
    expect([f.reason, f.message]).to.deep.equal([
      INVALID,
      "acquire.mode: unknown value 7 (expected EXCLUSIVE or SHARED)",
    ]);
  });

  it("fails a SHARED acquire with a limit over the maximum, naming acquire.limit and the maximum", async () => {
    const s = await session();
    s.send(acquireMsg("r1", "bad/limit", { mode: LockMode.LOCK_MODE_SHARED, limit: 1_000_001 }));
    const f = await failure(s, "r1");
    expect([f.reason, f.message]).to.deep.equal([INVALID, "acquire.limit: 1000001 exceeds the maximum of 1000000"]);
  });

  it("fails an EXCLUSIVE acquire with a non-zero limit, naming acquire.limit", async () => {
    const s = await session();
    s.send(acquireMsg("r1", "bad/limit", { limit: 3 }));
    const f = await failure(s, "r1");
    expect([f.reason, f.message]).to.deep.equal([INVALID, "acquire.limit: must be 0 for EXCLUSIVE locks (got 3)"]);
  });

  it("fails a SHARED acquire naming another limit than the one in force with CONFLICT", async () => {
    const s = await session();
    s.send(acquireMsg("r1", "bad/shared", { mode: LockMode.LOCK_MODE_SHARED, limit: 2 }));
    await s.next("acquired");
    s.send(acquireMsg("r2", "bad/shared", { mode: LockMode.LOCK_MODE_SHARED, limit: 0 }));
    const f = await failure(s, "r2");
    expect([f.reason, f.message]).to.deep.equal([
      FailureReason.FAILURE_REASON_CONFLICT,
      'acquire.limit: 0 (unlimited) differs from the SHARED limit 2 in force on "bad/shared" ' +
        "(it holds until nobody holds or waits for the name)",
    ]);
  });

  it("fails an acquire with a value over 4096 bytes", async () => {
    const s = await session();
    s.send(acquireMsg("r1", "bad/value", { value: Buffer.alloc(4097) }));
    expect((await failure(s, "r1")).message).to.equal("acquire.value: 4097 bytes exceeds the maximum of 4096 bytes");
  });

  it("fails a duplicate request_id of an acquire in flight and keeps the first", async () => {
    const s = await session();
    s.send(acquireMsg("w1", "bad/bystander"));
    await s.next("queued");
    s.send(acquireMsg("w1", "bad/other"));
    const f = await failure(s, "w1");
    expect(f.reason).to.equal(FailureReason.FAILURE_REASON_DUPLICATE_REQUEST);
    s.send(cancelMsg("w1"));
    expect((await failure(s, "w1")).reason).to.equal(FailureReason.FAILURE_REASON_CANCELLED);
  });

  it("fails a release of a lock never held with NOT_HELD", async () => {
    const s = await session();
    s.send(releaseMsg("r1", "bad/bystander", "keep"));
    const f = await failure(s, "r1");
    expect(f.reason).to.equal(FailureReason.FAILURE_REASON_NOT_HELD);
  });

  it("fails acquires past the per-session limit with LIMIT and keeps the ones granted", async () => {
    const s = await session();
    for (let i = 0; i < 60; i++) s.send(acquireMsg(`r${i}`, `bad/many/${i}`));
    for (let i = 0; i < 50; i++) await s.next("acquired", (a) => a.acquired.requestId === `r${i}`);
    for (let i = 50; i < 60; i++) {
      const f = await failure(s, `r${i}`);
      expect([f.reason, f.message]).to.deep.equal([
        FailureReason.FAILURE_REASON_LIMIT,
        "session: at most 50 locks held or pending per session",
      ]);
    }
    // At the limit, a re-entry of a lock held (same owner) adds a hold, not a lock: granted.
    s.send(acquireMsg("again", "bad/many/0", { owner: "r0" }));
    expect((await s.next("acquired", (a) => a.acquired.requestId === "again")).acquired.holdCount).to.equal(2);
  });

  it("answers a second Open with INVALID_ARGUMENT and keeps the session", async () => {
    const s = await session();
    s.sendOpen();
    expect((await s.next("failed")).failed.message).to.equal("open: the session is already open");
    s.send(acquireMsg("r1", "bad/after-second-open"));
    await s.next("acquired");
  });

  it("ends the stream with INVALID_ARGUMENT for a TTL out of range", async () => {
    const s = new RawSession(coord.address);
    open.push(s);
    s.sendOpen(500);
    const st = await s.status();
    expect([st.code, st.details]).to.deep.equal([
      status.INVALID_ARGUMENT,
      "open.ttl: 500 ms is outside the allowed range 1000..3600000 ms",
    ]);
  });

  it("ends the stream with RESOURCE_EXHAUSTED for an oversize message", async () => {
    const s = await session();
    s.send(acquireMsg("r1", "bad/huge", { value: Buffer.alloc(100_000) }));
    expect((await s.status()).code).to.equal(status.RESOURCE_EXHAUSTED);
  });

  it("answers a message with no known field with INVALID_ARGUMENT", async () => {
    const s = await session();
    s.send({ kind: undefined });
    expect((await s.next("failed")).failed.message).to.equal("request: no known field set in SessionRequest");
  });
});
