import { credentials } from "@grpc/grpc-js";
import { expect } from "chai";
import { LostLockError, TurnstileClient } from "../../client/index.js";
import { LockServiceClient, type RevokeRequest, type RevokeResponse } from "../../gen/ts/turnstile/v1/turnstile.js";
import type { Coordinator } from "../../server/coordinator.js";
import { startEmbeddedCoordinator } from "../harness/embedded-coordinator.js";
import { LeaderLog } from "../harness/leader-log.js";
import { RawSession } from "../harness/raw-session.js";
import { acquireMsg } from "../harness/requests.js";
import { unary } from "../harness/unary.js";

// Elections on the embedded store (`turnstile serve` without Redis): runs without redis-server.
describe("Election on the embedded store", () => {
  let coordinator: Coordinator;
  let address: string;
  const clients: TurnstileClient[] = [];
  const client = (ttlMs = 10_000) => {
    const c = new TurnstileClient(address, { ttlMs });
    clients.push(c);
    return c;
  };

  before(async () => {
    ({ coordinator, address } = await startEmbeddedCoordinator());
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  });
  after(() => coordinator.stop());

  it("reports a silent leader's expiry (null) and then the next leader, with a greater token", async () => {
    const log = new LeaderLog(client().election("embedded/expiry"));
    try {
      // A raw session that never sends a keepalive: its 1 s lease simply runs out.
      const silent = new RawSession(address);
      await silent.open(1000);
      silent.send(acquireMsg("r1", "embedded/expiry", { value: Buffer.from("silent") }));
      await log.until(() => log.tokens.length === 1, "the silent leader");
      await log.until(() => log.current === null, "its expiry", 3000);
      const next = await client().election("embedded/expiry").campaign("next");
      await log.until(() => log.tokens.length === 2, "the next leader");
      expect(log.tokens[1] > log.tokens[0]).to.equal(true);
      expect(log.tokens[1]).to.equal(next.fencingToken);
      silent.close();
    } finally {
      await log.stop();
    }
  });

  it("aborts a revoked leader's signal with 'revoked' and elects the next candidate at once", async () => {
    const leader = await client().election("embedded/revoke").campaign("first");
    const waiting = client().election("embedded/revoke").campaign("second");
    const current = await client().election("embedded/revoke").leader();
    const rpc = new LockServiceClient(address, credentials.createInsecure());
    try {
      const request = { name: "embedded/revoke", sessionId: current!.sessionId, owner: current!.owner };
      await unary<RevokeRequest, RevokeResponse>(rpc.revoke.bind(rpc), request);
    } finally {
      rpc.close();
    }
    const second = await waiting;
    expect(second.fencingToken).to.equal(leader.fencingToken + 1n);
    if (!leader.signal.aborted) await new Promise((resolve) => leader.signal.addEventListener("abort", resolve));
    expect(leader.signal.reason).to.be.instanceOf(LostLockError).with.property("lostReason", "revoked");
    await second.resign();
  });
});
