import { once } from "node:events";
import { status } from "@grpc/grpc-js";
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { expect } from "chai";
import { type Lock, type LostLockError, TurnstileClient, TurnstileError } from "../../client/index.js";
import type { SessionEvent } from "../../client/session/session.js";
import { freePort } from "../harness/free-port.js";
import { ScriptedCoordinator } from "../harness/scripted-coordinator.js";

function lostReasonOf(lock: Lock): string | undefined {
  return (lock.signal.reason as LostLockError | undefined)?.lostReason;
}

describe("session resume protocol (scripted coordinators)", () => {
  let one: ScriptedCoordinator;
  let two: ScriptedCoordinator;
  const clients: TurnstileClient[] = [];
  const client = (addresses: string[]) => {
    const c = new TurnstileClient(addresses, { ttlMs: 15_000 });
    clients.push(c);
    return c;
  };

  beforeEach(async () => {
    [one, two] = await Promise.all([ScriptedCoordinator.start(), ScriptedCoordinator.start()]);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close({ signal: AbortSignal.timeout(1000) }).catch(() => {})));
    one.stop();
    two.stop();
  });

  it("claims every hold (live handles + releases in flight) on the next address, re-sends lost releases and pending acquires with their request ids", async () => {
    const c = client([one.address, two.address]);
    const events: string[] = [];
    for (const type of ["connected", "reconnecting", "resumed", "expired"] as const)
      c.on(type, () => events.push(type));
    const connecting = c.connect();
    const first = await one.nextStream();
    expect((await first.openFresh()).resumeSessionId).to.equal("");
    await connecting;
    const aGranted = c.acquire("a", { owner: "o" });
    await first.grantNext(7n);
    const a = await aGranted;
    const b1Granted = c.acquire("b", { owner: "o" });
    await first.grantNext(8n);
    const b1 = await b1Granted;
    const b2Granted = c.acquire("b", { owner: "o" });
    await first.grantNext(8n, 2);
    const b2 = await b2Granted;
    const releasing = b2.release();
    const { release: lostRelease } = await first.next("release");
    const waiting = c.acquire("c", { owner: "o", waitMs: 60_000 });
    const { acquire: pending } = await first.next("acquire");

    first.fail(status.UNAVAILABLE, "connection reset");
    const second = await two.nextStream();
    const { open } = await second.next("open");
    expect([open.resumeSessionId, open.resumeSecret]).to.deep.equal(["s1", "secret"]);
    expect(open.held).to.deep.equal([
      { name: "a", owner: "o", fencingToken: 7n, holdCount: 1 },
      { name: "b", owner: "o", fencingToken: 8n, holdCount: 2 },
    ]);
    const resumed = once(c, "resumed");
    second.resumed(open.held);
    await resumed;
    await releasing;
    const { release } = await second.next("release");
    expect([release.name, release.owner]).to.deep.equal(["b", "o"]);
    expect(release.requestId).to.not.equal(lostRelease.requestId);
    const { acquire } = await second.next("acquire");
    expect([acquire.requestId, acquire.name]).to.deep.equal([pending.requestId, "c"]);
    const waitMs = Number(acquire.wait?.seconds) * 1000 + (acquire.wait?.nanos ?? 0) / 1e6;
    expect(waitMs).to.be.within(50_000, 60_000);
    second.send({
      $case: "acquired",
      acquired: { requestId: acquire.requestId, name: "c", fencingToken: 3n, holdCount: 1, fencingProof: "" },
    });
    expect((await waiting).fencingToken).to.equal(3n);
    expect([a.lost, b1.lost, c.state]).to.deep.equal([false, false, "connected"]);
    expect(events).to.deep.equal(["connected", "reconnecting", "resumed"]);
  });

  it("loses the holds the resume leaves out or lists with another token ('expired'), and resolves a release the server already applied without sending it again", async () => {
    const c = client([one.address, two.address]);
    const connecting = c.connect();
    const first = await one.nextStream();
    await first.openFresh();
    await connecting;
    const locks: Lock[] = [];
    for (const [name, token] of [
      ["kept", 1n],
      ["gone", 2n],
      ["stolen", 3n],
    ] as const) {
      const granted = c.acquire(name, { owner: "o" });
      await first.grantNext(token);
      locks.push(await granted);
    }
    const again = c.acquire("kept", { owner: "o" });
    await first.grantNext(1n, 2);
    const releasing = (await again).release();
    await first.next("release");

    first.fail(status.UNAVAILABLE, "connection reset");
    const second = await two.nextStream();
    const { open } = await second.next("open");
    expect(open.held.map((h) => [h.name, h.holdCount])).to.deep.equal([
      ["kept", 2],
      ["gone", 1],
      ["stolen", 1],
    ]);
    const held = [
      { name: "kept", owner: "o", fencingToken: 1n, holdCount: 1, fencingProof: "" },
      { name: "stolen", owner: "o", fencingToken: 30n, holdCount: 1 },
    ];
    second.resumed(held);
    await releasing;
    expect(locks.map(lostReasonOf)).to.deep.equal([undefined, "expired", "expired"]);
    const probe = c.acquire("probe");
    const { acquire } = await second.next("acquire");
    expect([acquire.name, second.pending()]).to.deep.equal(["probe", []]);
    void probe.catch(() => {});
  });

  it("expires on NOT_FOUND: held locks lost ('expired'), pending acquires rejected ('session-ended'); the next call opens a fresh session", async () => {
    const c = client([one.address, two.address]);
    const connecting = c.connect();
    const first = await one.nextStream();
    await first.openFresh();
    await connecting;
    const granted = c.acquire("x");
    await first.grantNext(5n);
    const lock = await granted;
    const waiting = c.acquire("y").catch((e) => e);
    await first.next("acquire");
    const expired = once(c, "expired");
    first.fail(status.UNAVAILABLE, "connection reset");
    const second = await two.nextStream();
    await second.next("open");
    second.fail(status.NOT_FOUND, 'open.resume_session_id: session "s1" is unknown or expired');
    const [event] = (await expired) as [SessionEvent];
    expect([event.sessionId, event.error?.reason, c.state]).to.deep.equal(["s1", "session-ended", "expired"]);
    expect(lostReasonOf(lock)).to.equal("expired");
    const err = await waiting;
    expect([err instanceof TurnstileError, err.reason]).to.deep.equal([true, "session-ended"]);

    const fresh = c.connect();
    const third = await one.nextStream();
    expect((await third.openFresh("s2")).resumeSessionId).to.equal("");
    await fresh;
    expect([c.sessionId, c.state]).to.deep.equal(["s2", "connected"]);
  });

  it("treats a refused resume secret (UNAUTHENTICATED) as expired with reason 'connection' and says so", async () => {
    const c = client([one.address, two.address]);
    const connecting = c.connect();
    const first = await one.nextStream();
    await first.openFresh();
    await connecting;
    const granted = c.acquire("x");
    await first.grantNext(5n);
    const lock = await granted;
    const waiting = c.acquire("y").catch((e) => e);
    await first.next("acquire");
    first.fail(status.UNAVAILABLE, "connection reset");
    const second = await two.nextStream();
    await second.next("open");
    second.fail(status.UNAUTHENTICATED, "open.resume_secret: does not match the session");
    const err = await waiting;
    expect([err.reason, c.state]).to.deep.equal(["connection", "expired"]);
    expect(err.message).to.match(/refused its resume secret/);
    expect(lostReasonOf(lock)).to.equal("session-ended");
  });

  it("stops reconnecting on close() and resolves; held locks are lost ('session-ended')", async () => {
    const c = new TurnstileClient([one.address], { ttlMs: 15_000, backoff: { baseMs: 60_000, maxMs: 60_000 } });
    clients.push(c);
    const connecting = c.connect();
    const first = await one.nextStream();
    await first.openFresh();
    await connecting;
    const granted = c.acquire("x");
    await first.grantNext(5n);
    const lock = await granted;
    const reconnecting = once(c, "reconnecting");
    first.fail(status.UNAVAILABLE, "connection reset");
    await reconnecting;
    await c.close({ signal: AbortSignal.timeout(1000) });
    expect([c.state, lostReasonOf(lock)]).to.deep.equal(["closed", "session-ended"]);
  });

  it("tries each address once for a first open, and rejects with 'connection' when none answers", async () => {
    const dead = [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`];
    const unreachable = client(dead);
    const err = await unreachable.connect().catch((e) => e);
    expect([err instanceof TurnstileError, err.reason, unreachable.state]).to.deep.equal([true, "connection", "idle"]);

    const fallsThrough = client([dead[0], one.address]);
    const connecting = fallsThrough.connect();
    await (await one.nextStream()).openFresh();
    await connecting;
    expect(fallsThrough.state).to.equal("connected");
  });
  it("re-sends a pending acquire with its caller's trace context, not the context the resume runs in", async () => {
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    try {
      const c = client([one.address, two.address]);
      const connecting = c.connect();
      const first = await one.nextStream();
      await first.openFresh();
      await connecting;
      const [traceId, spanId] = ["ab".repeat(16), "cd".repeat(8)];
      const caller = api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId, spanId, traceFlags: 1 });
      const waiting = api.context.with(caller, () => c.acquire("t", { owner: "o", waitMs: 60_000 }));
      const { acquire: sent } = await first.next("acquire");
      expect(sent.traceParent).to.equal(`00-${traceId}-${spanId}-01`);

      first.fail(status.UNAVAILABLE, "connection reset");
      const second = await two.nextStream();
      const { open } = await second.next("open");
      second.resumed(open.held);
      const { acquire: resent } = await second.next("acquire");
      expect([resent.requestId, resent.traceParent]).to.deep.equal([sent.requestId, sent.traceParent]);
      second.send({
        $case: "acquired",
        acquired: { requestId: resent.requestId, name: "t", fencingToken: 1n, holdCount: 1, fencingProof: "" },
      });
      expect((await waiting).fencingToken).to.equal(1n);
    } finally {
      api.context.disable();
    }
  });
});
