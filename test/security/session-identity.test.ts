import { status } from "@grpc/grpc-js";
import { expect } from "chai";
import { type DescribeRequest, type DescribeResponse, LockServiceClient } from "../../gen/ts/turnstile/v1/turnstile.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg } from "../harness/requests.js";
import { type SecureCoordinator, startSecureCoordinator } from "../harness/secure-coordinator.js";
import { type CertFiles, clientCredentials } from "../harness/test-pki.js";
import { unary } from "../harness/unary.js";

describe("sessions bound to identities (mTLS, on Redis)", () => {
  let redis: TestRedis;
  let coord: SecureCoordinator;
  let alice: CertFiles;
  let bob: CertFiles;
  const open: { close(): void }[] = [];
  const stream = (who: CertFiles) => {
    const s = new RawSession(coord.address, clientCredentials(coord.pki.ca, who));
    open.push(s);
    return s;
  };
  const describeLock = (name: string) => {
    const rpc = new LockServiceClient(coord.address, clientCredentials(coord.pki.ca, alice));
    open.push(rpc);
    return unary<DescribeRequest, DescribeResponse>(rpc.describe.bind(rpc), { name });
  };

  before(async () => {
    redis = await startRedis();
    coord = await startSecureCoordinator({ redisUrl: redis.url });
    alice = coord.pki.leaf("alice", { cn: "alice", san: ["URI:spiffe://corp/alice"] });
    bob = coord.pki.leaf("bob", { cn: "bob", san: ["URI:spiffe://corp/bob"] });
  });
  afterEach(() => {
    for (const c of open.splice(0)) c.close();
  });
  after(async () => {
    await coord.stop();
    await redis.stop();
  });

  it("names the holder's identity in a waiter's blocked_by, in Describe and in a TIMEOUT", async () => {
    const holder = stream(alice);
    const { sessionId } = await holder.open(60_000);
    holder.send(acquireMsg("h1", "bound/behind", { owner: "holder" }));
    await holder.next("acquired");
    const waiter = stream(bob);
    await waiter.open(60_000);
    waiter.send(acquireMsg("w1", "bound/behind", { owner: "waiter", waitMs: 300 }));
    await waiter.next("queued");
    const d = await describeLock("bound/behind");
    expect(d.waiters.flatMap((w) => w.blockedBy.map((b) => [b.sessionId, b.identity]))).to.deep.equal([
      [sessionId, "spiffe://corp/alice"],
    ]);
    const { failed } = await waiter.next("failed");
    expect(failed.blockedBy.map((b) => b.identity)).to.deep.equal(["spiffe://corp/alice"]);
  });

  it("refuses a resume from another identity even with the right secret, and the owner still resumes", async () => {
    const first = stream(alice);
    const opened = await first.open(60_000);
    first.send(acquireMsg("r1", "bound/x", { owner: "me" }));
    const { acquired } = await first.next("acquired");
    first.close();

    const resume = {
      sessionId: opened.sessionId,
      secret: opened.resumeSecret,
      held: [{ name: "bound/x", owner: "me", fencingToken: acquired.fencingToken, holdCount: 1 }],
    };
    const thief = stream(bob);
    thief.sendOpen(60_000, resume);
    const refused = await thief.status();
    expect(refused.code).to.equal(status.PERMISSION_DENIED);
    expect(refused.details).to.include("another identity").and.not.to.include(opened.resumeSecret);
    expect(thief.received).to.deep.equal([]);

    const d = await describeLock("bound/x");
    expect(d.holders.map((h) => [h.sessionId, h.identity, h.fencingToken])).to.deep.equal([
      [opened.sessionId, "spiffe://corp/alice", acquired.fencingToken],
    ]);

    const owner = stream(alice);
    owner.sendOpen(60_000, resume);
    const { opened: again } = await owner.next("opened");
    expect([again.resumed, again.held.map((h) => [h.name, h.fencingToken])]).to.deep.equal([
      true,
      [["bound/x", acquired.fencingToken]],
    ]);
  });
});
