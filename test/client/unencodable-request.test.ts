import { credentials, status } from "@grpc/grpc-js";
import { expect } from "chai";
import { ChannelPool } from "../../client/connection/channel-pool.js";
import { TurnstileError } from "../../client/index.js";
import type { SessionSetAcquire } from "../../client/session/requests/set-acquires-in-flight.js";
import { Session, type SessionEvent } from "../../client/session/session.js";
import { LockMode } from "../../gen/ts/turnstile/v1/turnstile.js";
import { ScriptedCoordinator } from "../harness/scripted-coordinator.js";

/** How `work` ended (its error, or "granted"); rejects when it is still pending after `watchdogMs`. */
async function outcome(work: Promise<unknown>, watchdogMs: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${watchdogMs} ms`)), watchdogMs);
  });
  try {
    return await Promise.race([
      work.then(
        () => "granted",
        (e: unknown) => e,
      ),
      hung,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

// A request the session cannot encode (a field of the wrong type that got past the checks) must fail
// alone: gRPC would cancel the whole stream over it, and every resume would send it, and break, again.
describe("a session request that cannot be encoded (scripted coordinators)", () => {
  let one: ScriptedCoordinator;
  let two: ScriptedCoordinator;
  let session: Session | undefined;
  const events: SessionEvent["type"][] = [];
  let onEvent: (event: SessionEvent) => void = () => {};
  const start = () => {
    const channels = new ChannelPool([one.address, two.address], credentials.createInsecure());
    session = new Session(channels, {
      ttlMs: 15_000,
      clientName: "test",
      // Only a drain moves the session on at once: any other break would wait a minute.
      backoff: { baseMs: 60_000, maxMs: 60_000 },
      random: () => 1,
      onEvent: (event) => {
        events.push(event.type);
        onEvent(event);
      },
    });
    return session;
  };
  // limit is a uint32 on the wire: a string cannot be encoded.
  const unencodable: SessionSetAcquire = {
    name: "bad",
    locks: [{ name: "bad", mode: LockMode.LOCK_MODE_SHARED, limit: "z" as never }],
    owner: "o",
  };
  const request = (name: string) => ({ name, owner: "o", mode: LockMode.LOCK_MODE_EXCLUSIVE, limit: 0 });

  beforeEach(async () => {
    events.length = 0;
    onEvent = () => {};
    [one, two] = await Promise.all([ScriptedCoordinator.start(), ScriptedCoordinator.start()]);
  });
  afterEach(async () => {
    await session?.close({ signal: AbortSignal.timeout(1000) }).catch(() => {});
    one.stop();
    two.stop();
  });

  it("rejects it alone with 'invalid-argument': the stream stays open and carries the next acquire", async () => {
    const s = start();
    const opening = s.open();
    const first = await one.nextStream();
    await first.openFresh();
    await opening;
    const error = await outcome(s.acquireAll(unencodable), 3000);
    expect(error).to.be.instanceOf(TurnstileError);
    expect((error as TurnstileError).reason).to.equal("invalid-argument");
    expect((error as TurnstileError).message).to.match(
      /^acquire_all request: cannot be encoded \(.+\); nothing was sent$/,
    );
    const granted = s.acquire(request("next"));
    await first.grantNext(1n);
    expect((await granted).fencingToken).to.equal(1n);
    expect([first.ended, s.state, events]).to.deep.equal([false, "connected", ["connected"]]);
  });

  it("rejects one issued while reconnecting with 'invalid-argument' at the resume, which then goes on", async () => {
    const s = start();
    const opening = s.open();
    const first = await one.nextStream();
    await first.openFresh();
    await opening;
    const reconnecting = new Promise<void>((resolve) => {
      onEvent = (event) => event.type === "reconnecting" && resolve();
    });
    first.fail(status.UNAVAILABLE, "coordinator draining: resume on another coordinator");
    await reconnecting;
    // Dropped now (no opened stream): the resume is what sends it.
    const bad = outcome(s.acquireAll(unencodable), 5000);
    const second = await two.nextStream();
    await second.next("open");
    second.resumed([]);
    const error = await bad;
    expect(error).to.be.instanceOf(TurnstileError);
    expect((error as TurnstileError).reason).to.equal("invalid-argument");
    const granted = s.acquire(request("after"));
    await second.grantNext(2n);
    expect((await granted).fencingToken).to.equal(2n);
    expect([second.ended, s.state, second.pending()]).to.deep.equal([false, "connected", []]);
  });
});
