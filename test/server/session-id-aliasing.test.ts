import { credentials, status } from "@grpc/grpc-js";
import { expect } from "chai";
import { Redis } from "ioredis";
import {
  LockServiceClient,
  LostReason,
  type RevokeRequest,
  type RevokeResponse,
} from "../../gen/ts/turnstile/v1/turnstile.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { failureOf, unary } from "../harness/unary.js";

const NOT_A_SESSION_ID = "not a session id (32 lowercase hex digits, as Describe shows them)";

// Holder ids are "session:owner": a session id with a ":" in it could name another session's hold.
describe("session ids from outside", () => {
  let redis: TestRedis;
  let holderCoord: TestCoordinator;
  let adminCoord: TestCoordinator;
  let rpc: LockServiceClient;
  let client: Redis;
  const opened: RawSession[] = [];
  const session = async (c: TestCoordinator) => {
    const s = new RawSession(c.address);
    opened.push(s);
    return Object.assign(s, { id: (await s.open(60_000)).sessionId });
  };
  const revoke = (request: RevokeRequest) => unary<RevokeRequest, RevokeResponse>(rpc.revoke.bind(rpc), request);
  const holders = (name: string) => client.zrange(`turnstile:{${name}}:holders`, 0, "-1");

  before(async () => {
    redis = await startRedis();
    [holderCoord, adminCoord] = await Promise.all([startCoordinator(redis.url), startCoordinator(redis.url)]);
    rpc = new LockServiceClient(adminCoord.address, credentials.createInsecure());
    client = new Redis(redis.url);
  });
  afterEach(() => {
    for (const s of opened.splice(0)) s.close();
  });
  after(async () => {
    rpc.close();
    client.disconnect();
    await Promise.all([holderCoord.stop(), adminCoord.stop()]);
    await redis.stop();
  });

  it('refuses Revoke(session "S:a", owner "b") with INVALID_ARGUMENT and leaves S\'s hold of owner "a:b" alone', async () => {
    const holder = await session(holderCoord);
    const waiter = await session(adminCoord);
    holder.send(acquireMsg("r1", "alias/x", { owner: "a:b" }));
    await holder.next("acquired");
    waiter.send(acquireMsg("w1", "alias/x"));
    await waiter.next("queued");

    const err = await failureOf(revoke({ name: "alias/x", sessionId: `${holder.id}:a`, owner: "b" }));
    expect([err.code, err.details]).to.deep.equal([status.INVALID_ARGUMENT, `revoke.session_id: ${NOT_A_SESSION_ID}`]);
    expect(await holders("alias/x")).to.deep.equal([`${holder.id}:a:b`]);
    expect(await client.zrange("turnstile:{alias/x}:queue", 0, "-1")).to.deep.equal([`${waiter.id}:w1`]);
    expect(holder.received.filter((r) => r.kind?.$case === "lost")).to.deep.equal([]);

    // The real (session, owner) revokes it: the real holder is told, the waiter gets the lock.
    const revoked = await revoke({ name: "alias/x", sessionId: holder.id, owner: "a:b" });
    const lost = (await holder.next("lost")).lost;
    expect([lost.name, lost.owner, lost.reason, lost.fencingToken]).to.deep.equal([
      "alias/x",
      "a:b",
      LostReason.LOST_REASON_REVOKED,
      revoked.fencingToken,
    ]);
    expect((await waiter.next("acquired")).acquired.fencingToken).to.equal(revoked.fencingToken + 1n);
    expect(await holders("alias/x")).to.deep.equal([`${waiter.id}:w1`]);
  });

  const malformed: [string, (id: string) => string][] = [
    ["with a colon", (id) => `${id}:a`],
    ["in upper case", (id) => id.toUpperCase()],
    ["one digit short", (id) => id.slice(1)],
    ["with a brace", (id) => `${id.slice(1)}}`],
  ];
  for (const [i, [what, mangle]] of malformed.entries()) {
    const [y, z] = [`alias/y${i}`, `alias/z${i}`];
    it(`refuses a Revoke whose session id is ${what}, naming revoke.session_id`, async () => {
      const holder = await session(holderCoord);
      holder.send(acquireMsg("r1", y));
      await holder.next("acquired");
      const err = await failureOf(revoke({ name: y, sessionId: mangle(holder.id), owner: "r1" }));
      expect([err.code, err.details]).to.deep.equal([
        status.INVALID_ARGUMENT,
        `revoke.session_id: ${NOT_A_SESSION_ID}`,
      ]);
      expect(await holders(y)).to.deep.equal([`${holder.id}:r1`]);
    });

    it(`ends a resume whose session id is ${what} with INVALID_ARGUMENT naming open.resume_session_id`, async () => {
      const holder = await session(holderCoord);
      holder.send(acquireMsg("r1", z));
      await holder.next("acquired");
      const thief = new RawSession(holderCoord.address);
      opened.push(thief);
      thief.sendOpen(5000, {
        sessionId: mangle(holder.id),
        secret: "x",
        held: [{ name: z, owner: "r1", fencingToken: 0n, holdCount: 1 }],
      });
      const st = await thief.status();
      expect([st.code, st.details]).to.deep.equal([
        status.INVALID_ARGUMENT,
        `open.resume_session_id: ${NOT_A_SESSION_ID}`,
      ]);
      expect(await holders(z)).to.deep.equal([`${holder.id}:r1`]);
    });
  }
});
