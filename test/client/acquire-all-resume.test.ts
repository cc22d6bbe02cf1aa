import { credentials, status } from "@grpc/grpc-js";
import { expect } from "chai";
import { ChannelPool } from "../../client/connection/channel-pool.js";
import { sessionSetAcquire } from "../../client/session/requests/set-acquires-in-flight.js";
import { Session, type SessionEvent } from "../../client/session/session.js";
import { ScriptedCoordinator } from "../harness/scripted-coordinator.js";

// The client's side of AcquireAll across a broken stream and an abort (scripted coordinators).
describe("acquireAll in flight (scripted coordinators)", () => {
  let one: ScriptedCoordinator;
  let two: ScriptedCoordinator;
  let session: Session | undefined;
  let onEvent: (event: SessionEvent) => void = () => {};
  const start = () => {
    const channels = new ChannelPool([one.address, two.address], credentials.createInsecure());
    session = new Session(channels, { ttlMs: 15_000, clientName: "test", onEvent: (event) => onEvent(event) });
    return session;
  };
  const acquiredAll = (requestId: string, tokens: [string, bigint][]) => ({
    $case: "acquiredAll" as const,
    acquiredAll: {
      requestId,
      locks: tokens.map(([name, fencingToken]) => ({ requestId, name, fencingToken, holdCount: 1, fencingProof: "" })),
    },
  });

  beforeEach(async () => {
    onEvent = () => {};
    [one, two] = await Promise.all([ScriptedCoordinator.start(), ScriptedCoordinator.start()]);
  });
  afterEach(async () => {
    await session?.close({ signal: AbortSignal.timeout(1000) }).catch(() => {});
    one.stop();
    two.stop();
  });

  it("re-sends a waiting set after a resume, same request id and names, and takes the grant there", async () => {
    const s = start();
    const opening = s.open();
    const first = await one.nextStream();
    await first.openFresh();
    await opening;
    const pending = s.acquireAll(sessionSetAcquire(["a", { name: "b", mode: "shared", limit: 2 }], { owner: "o" }));
    const { acquireAll: sent } = await first.next("acquireAll");
    expect(sent.locks.map((l) => [l.name, l.mode, l.limit])).to.deep.equal([
      ["a", 1, 0],
      ["b", 2, 2],
    ]);
    first.fail(status.UNAVAILABLE, "coordinator draining: resume on another coordinator");
    const second = await two.nextStream();
    const { open } = await second.next("open");
    second.resumed(open.held);
    const { acquireAll: again } = await second.next("acquireAll");
    expect([again.requestId, again.owner, again.locks.map((l) => l.name)]).to.deep.equal([
      sent.requestId,
      "o",
      ["a", "b"],
    ]);
    second.send(
      acquiredAll(again.requestId, [
        ["a", 7n],
        ["b", 3n],
      ]),
    );
    const locks = await pending;
    expect(locks.map((l) => [l.name, l.fencingToken])).to.deep.equal([
      ["a", 7n],
      ["b", 3n],
    ]);
  });

  it("cancels an aborted set, and releases every lock of a grant that crossed the cancel", async () => {
    const s = start();
    const opening = s.open();
    const stream = await one.nextStream();
    await stream.openFresh();
    await opening;
    const controller = new AbortController();
    const pending = s.acquireAll(sessionSetAcquire(["a", "b"], { owner: "o" }), { signal: controller.signal });
    const { acquireAll: sent } = await stream.next("acquireAll");
    controller.abort(new Error("stop"));
    await pending.then(
      () => expect.fail("resolved"),
      (err: Error) => expect(err.message).to.equal("stop"),
    );
    expect((await stream.next("cancel")).cancel.requestId).to.equal(sent.requestId);
    stream.send(
      acquiredAll(sent.requestId, [
        ["a", 1n],
        ["b", 1n],
      ]),
    );
    const released = [(await stream.next("release")).release, (await stream.next("release")).release];
    expect(released.map((r) => [r.name, r.owner])).to.deep.equal([
      ["a", "o"],
      ["b", "o"],
    ]);
  });
});
