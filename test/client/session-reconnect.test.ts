import { credentials, status } from "@grpc/grpc-js";
import { expect } from "chai";
import { ChannelPool } from "../../client/connection/channel-pool.js";
import { TurnstileError } from "../../client/index.js";
import { Session, type SessionEvent } from "../../client/session/session.js";
import { LockMode } from "../../gen/ts/turnstile/v1/turnstile.js";
import { ScriptedCoordinator } from "../harness/scripted-coordinator.js";

describe("Session reconnect timing (scripted coordinators, injected clock)", () => {
  let one: ScriptedCoordinator;
  let two: ScriptedCoordinator;
  let session: Session | undefined;
  let nowMs = 1_000;
  let onEvent: (event: SessionEvent) => void = () => {};
  const start = (backoff = { baseMs: 60_000, maxMs: 60_000 }) => {
    const channels = new ChannelPool([one.address, two.address], credentials.createInsecure());
    session = new Session(channels, {
      ttlMs: 15_000,
      clientName: "test",
      backoff,
      random: () => 1,
      now: () => nowMs,
      onEvent: (event) => onEvent(event),
    });
    return session;
  };
  const request = (name: string, waitMs?: number) => ({
    name,
    owner: "o",
    mode: LockMode.LOCK_MODE_EXCLUSIVE,
    limit: 0,
    waitMs,
  });

  beforeEach(async () => {
    nowMs = 1_000;
    onEvent = () => {};
    [one, two] = await Promise.all([ScriptedCoordinator.start(), ScriptedCoordinator.start()]);
  });
  afterEach(async () => {
    await session?.close({ signal: AbortSignal.timeout(1000) }).catch(() => {});
    one.stop();
    two.stop();
  });

  it("resumes on the next address at once when the coordinator drains, with no backoff delay", async () => {
    const s = start();
    const opening = s.open();
    const first = await one.nextStream();
    await first.openFresh();
    await opening;
    first.fail(status.UNAVAILABLE, "coordinator draining: resume on another coordinator");
    // The backoff would wait 60 s here (random() = 1): only the drain rule explains a stream now.
    const second = await two.nextStream(2000);
    expect((await second.next("open")).open.resumeSessionId).to.equal("s1");
  });

  it("counts the resume's open send time as a renewal of the held locks", async () => {
    const s = start();
    const opening = s.open();
    const first = await one.nextStream();
    await first.openFresh();
    await opening;
    const granted = s.acquire(request("x"));
    await first.grantNext(5n);
    const lock = await granted;
    expect(lock.leaseRemainingMs).to.equal(15_000 - 1_500);
    nowMs += 10_000;
    first.fail(status.UNAVAILABLE, "coordinator draining: resume on another coordinator");
    const second = await two.nextStream();
    const { open } = await second.next("open");
    nowMs += 1_000;
    const resumed = new Promise<void>((resolve) => {
      onEvent = (event) => event.type === "resumed" && resolve();
    });
    second.resumed(open.held);
    await resumed;
    // Open sent at +10 s: the lease now ends 15 s − 1.5 s after that, 1 s of which has passed.
    expect(lock.leaseRemainingMs).to.equal(15_000 - 1_500 - 1_000);
  });

  it("rejects an acquire whose wait ran out while reconnecting with 'timeout', re-sends it as try-once + cancel, and releases a grant that raced the break", async () => {
    const s = start();
    const opening = s.open();
    const first = await one.nextStream();
    await first.openFresh();
    await opening;
    const waiting = s.acquire(request("x", 500)).catch((e) => e);
    const { acquire: sent } = await first.next("acquire");
    first.fail(status.UNAVAILABLE, "coordinator draining: resume on another coordinator");
    const second = await two.nextStream();
    await second.next("open");
    nowMs += 600;
    second.resumed([]);
    const err = await waiting;
    expect([err instanceof TurnstileError, err.reason]).to.deep.equal([true, "timeout"]);
    const { acquire } = await second.next("acquire");
    expect([acquire.requestId, acquire.wait]).to.deep.equal([sent.requestId, { seconds: 0n, nanos: 0 }]);
    expect((await second.next("cancel")).cancel.requestId).to.equal(sent.requestId);
    second.send({
      $case: "acquired",
      acquired: { requestId: sent.requestId, name: "x", fencingToken: 9n, holdCount: 1, fencingProof: "" },
    });
    const { release } = await second.next("release");
    expect([release.name, release.owner]).to.deep.equal(["x", "o"]);
  });
});
