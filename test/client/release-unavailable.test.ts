import { expect } from "chai";
import { TurnstileClient } from "../../client/turnstile-client.js";
import { FailureReason } from "../../gen/ts/turnstile/v1/turnstile.js";
import { ScriptedCoordinator } from "../harness/scripted-coordinator.js";

describe("release()", () => {
  let server: ScriptedCoordinator;
  let client: TurnstileClient | undefined;

  beforeEach(async () => {
    server = await ScriptedCoordinator.start();
  });
  afterEach(async () => {
    await client?.close({ signal: AbortSignal.timeout(1000) }).catch(() => {});
    server.stop();
  });

  it("sends the release again when it is answered UNAVAILABLE, and resolves once it is released", async () => {
    client = new TurnstileClient([server.address], { ttlMs: 15_000 });
    const connecting = client.connect();
    const stream = await server.nextStream();
    await stream.openFresh();
    await connecting;
    const granted = client.acquire("x", { owner: "o" });
    await stream.grantNext(3n);
    const lock = await granted;
    const releasing = lock.release();
    const first = (await stream.next("release")).release;
    stream.send({
      $case: "failed",
      failed: {
        requestId: first.requestId,
        reason: FailureReason.FAILURE_REASON_UNAVAILABLE,
        blockedBy: [],
        deadlockCycle: [],
        message: "store unavailable: nothing was changed, retry later",
        name: "x",
      },
    });
    const second = (await stream.next("release")).release;
    expect([second.name, second.owner]).to.deep.equal(["x", "o"]);
    expect(second.requestId).to.not.equal(first.requestId);
    stream.send({ $case: "released", released: { requestId: second.requestId, name: "x", holdCount: 0 } });
    await releasing;
    expect(lock.lost).to.equal(false);
  });

  it("resolves, instead of hanging, when the session ends while a release waits to be sent again", async () => {
    client = new TurnstileClient([server.address], { ttlMs: 15_000 });
    const connecting = client.connect();
    const stream = await server.nextStream();
    await stream.openFresh();
    await connecting;
    const granted = client.acquire("y", { owner: "o" });
    await stream.grantNext(4n);
    const lock = await granted;
    const releasing = lock.release();
    const first = (await stream.next("release")).release;
    const unavailable = FailureReason.FAILURE_REASON_UNAVAILABLE;
    stream.send({
      $case: "failed",
      failed: {
        requestId: first.requestId,
        reason: unavailable,
        message: "",
        name: "y",
        blockedBy: [],
        deadlockCycle: [],
      },
    });
    await client.close({ signal: AbortSignal.timeout(1000) }).catch(() => {});
    // release() resolves quietly once the session is over: its holds ended with it.
    await releasing;
  });
});
