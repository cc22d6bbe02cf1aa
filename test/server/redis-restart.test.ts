import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { FailureReason } from "../../gen/ts/turnstile/v1/turnstile.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, keepAliveMsg, releaseMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

describe("redis-server killed and restarted under a coordinator (AOF, fsync always)", () => {
  let dir: string;
  let redis: TestRedis;
  let coord: TestCoordinator;
  let s: RawSession;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "turnstile-aof-"));
    redis = await startRedis({ dir, appendonly: true });
    coord = await startCoordinator(redis.url);
  });
  after(async () => {
    s?.close();
    await coord.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers UNAVAILABLE while Redis is down, keeps the session's locks, and never reuses a fencing token", async () => {
    s = new RawSession(coord.address);
    await s.open(30_000);
    s.send(acquireMsg("a", "restart/held"));
    const held = (await s.next("acquired")).acquired;
    s.send(acquireMsg("b", "restart/counter"));
    const counted = (await s.next("acquired")).acquired;
    s.send(releaseMsg("b2", "restart/counter", "b"));
    await s.next("released");

    await redis.stop();
    s.send(acquireMsg("c", "restart/while-down"));
    const failed = (await s.next("failed", (f) => f.failed.requestId === "c")).failed;
    expect(failed.reason).to.equal(FailureReason.FAILURE_REASON_UNAVAILABLE);

    redis = await startRedis({ port: redis.port, dir, appendonly: true });
    // The coordinator reconnects by itself; a keepalive is acknowledged once it has, with no Lost.
    let acked = false;
    for (let seq = 1; !acked && seq <= 50; seq++) {
      s.send(keepAliveMsg(seq));
      acked = await s
        .next("keepAliveAck", (k) => k.keepAliveAck.seq === BigInt(seq), 200)
        .then(
          () => true,
          () => false,
        );
    }
    expect(acked).to.equal(true);
    expect(s.received.some((r) => r.kind?.$case === "lost")).to.equal(false);
    s.send(acquireMsg("d", "restart/counter"));
    const again = (await s.next("acquired", (x) => x.acquired.requestId === "d")).acquired;
    expect(again.fencingToken > counted.fencingToken).to.equal(true);
    s.send(releaseMsg("a2", "restart/held", "a"));
    expect((await s.next("released", (r) => r.released.requestId === "a2")).released.holdCount).to.equal(0);
    expect(held.fencingToken > 0n).to.equal(true);
  });
});
