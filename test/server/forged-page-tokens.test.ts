import { createHash } from "node:crypto";
import { credentials, status } from "@grpc/grpc-js";
import { expect } from "chai";
import { Redis } from "ioredis";
import { type ListRequest, type ListResponse, LockServiceClient } from "../../gen/ts/turnstile/v1/turnstile.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";
import { failureOf, unary } from "../harness/unary.js";

/** A token in the Redis lister's format, as someone who read its source would forge it. */
function forge(prefix: string, cursor: string | null, pending: string[]): string {
  const digest = createHash("sha256").update(prefix).digest("base64url").slice(0, 12);
  return Buffer.from(JSON.stringify([cursor, pending, digest])).toString("base64url");
}

describe("List page tokens", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  let rpc: LockServiceClient;
  let client: Redis;
  let holder: RawSession;
  const list = (prefix: string, pageToken: string) =>
    unary<ListRequest, ListResponse>(rpc.list.bind(rpc), { prefix, pageSize: 10, pageToken });

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
    rpc = new LockServiceClient(coord.address, credentials.createInsecure());
    client = new Redis(redis.url);
    holder = new RawSession(coord.address);
    await holder.open(60_000);
    holder.send(acquireMsg("s", "secret/db-master"));
    holder.send(acquireMsg("p", "pub/a"));
    await holder.next("acquired", (a) => a.acquired.requestId === "s");
    await holder.next("acquired", (a) => a.acquired.requestId === "p");
  });
  after(async () => {
    holder.close();
    rpc.close();
    client.disconnect();
    await coord.stop();
    await redis.stop();
  });

  const refused: [string, () => string][] = [
    ["carrying a name outside the prefix", () => forge("pub/", null, ["secret/db-master"])],
    ["mixing a name outside the prefix into names inside it", () => forge("pub/", "0", ["pub/a", "secret/db-master"])],
    ["with a cursor of 10^26", () => forge("pub/", `1${"0".repeat(26)}`, [])],
    ["with a cursor of 2^64", () => forge("pub/", String(2n ** 64n), [])],
    ["with a cursor with leading zeros", () => forge("pub/", "007", [])],
    ["with a negative cursor", () => forge("pub/", "-1", [])],
    ["issued for another prefix", () => forge("secret/", null, ["secret/db-master"])],
    ["of garbage", () => "not-a-token!!"],
    ["of base64 that is not JSON", () => Buffer.from("\u0000\u0001").toString("base64url")],
    ["of 20,000 characters", () => "A".repeat(20_000)],
  ];
  for (const [what, token] of refused) {
    it(`refuses a token ${what} with INVALID_ARGUMENT naming list.page_token`, async () => {
      const err = await failureOf(list("pub/", token()));
      expect([err.code, err.details]).to.deep.equal([
        status.INVALID_ARGUMENT,
        "list.page_token: not a token this server issued for this prefix (start again with an empty token)",
      ]);
      // Nothing changed: the holds are still in Redis.
      expect(await client.zcard("turnstile:{secret/db-master}:holders")).to.equal(1);
      expect(await client.zcard("turnstile:{pub/a}:holders")).to.equal(1);
    });
  }

  it("accepts the largest cursor Redis can issue (2^64 - 1) and answers only names under the prefix", async () => {
    const page = await list("pub/", forge("pub/", String(2n ** 64n - 1n), ["pub/a"]));
    expect(page.locks.every((l) => l.name.startsWith("pub/"))).to.equal(true);
    expect(page.locks.map((l) => l.name)).to.include("pub/a");
  });
});
