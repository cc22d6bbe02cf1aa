import { expect } from "chai";
import { waitForLeaseEnd } from "../../harness/wait-for-lease-end.js";
import { acquire, keys, redisNow, release, renew, renewMany, useScripts } from "./script-fixture.js";

/** A session record's key, under its own hash tag as the coordinator writes it. */
const RECORD = "t:session:{s1}";

describe("renew.lua", () => {
  const f = useScripts();

  it("returns the hold's token and count and pushes its lease deadline to now + ttl", async () => {
    await acquire(f, "a", { session: "s1", ttl: 1_000 });
    const before = await redisNow(f.redis);
    expect(await renew(f, "a", "s1", 20_000, ["o"], [])).to.deep.equal(["1 1"]);
    const after = await redisNow(f.redis);
    const deadline = Number(await f.redis.zscore(keys("a").holders, "s1:o"));
    expect(deadline).to.be.within(before + 20_000, after + 20_000);
  });

  it("keeps the fencing counter retain ms past a renewed hold, so a long hold never loses it", async () => {
    await acquire(f, "a", { session: "s1", ttl: 1_000 });
    expect(await renew(f, "a", "s1", 200_000, ["o"], [])).to.deep.equal(["1 1"]);
    expect(await f.redis.pttl(keys("a").fence)).to.be.within(200_000 + 60_000 - 5_000, 200_000 + 60_000);
  });

  it("returns 1 and pushes a queued waiter's lease deadline to now + ttl", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", ttl: 1_000 });
    const before = await redisNow(f.redis);
    expect(await renew(f, "a", "s2", 20_000, [], [["r", "o"]])).to.deep.equal([1]);
    const after = await redisNow(f.redis);
    const deadline = Number(await f.redis.zscore(keys("a").leases, "s2:r"));
    expect(deadline).to.be.within(before + 20_000, after + 20_000);
  });

  it("returns 0 for an owner that holds nothing and a request that is not queued, adding neither", async () => {
    await acquire(f, "a", { session: "s1" });
    expect(await renew(f, "a", "s1", 20_000, ["nobody"], [["nothing", "nobody"]])).to.deep.equal([0, 0]);
    expect(await renew(f, "a", "s2", 20_000, ["o"], [])).to.deep.equal([0]);
    expect(await f.redis.zrange(keys("a").holders, 0, "-1")).to.deep.equal(["s1:o"]);
    expect(await f.redis.zcard(keys("a").leases)).to.equal(0);
  });

  it("returns 0 for a holder whose lease already ended and does not revive it", async () => {
    await acquire(f, "a", { session: "s1", ttl: 80 });
    const deadline = await f.redis.zscore(keys("a").holders, "s1:o");
    await waitForLeaseEnd(f.redis, keys("a").holders, "s1:o");
    expect(await renew(f, "a", "s1", 20_000, ["o"], [])).to.deep.equal([0]);
    expect(await f.redis.zscore(keys("a").holders, "s1:o")).to.equal(deadline);
    expect(await acquire(f, "a", { session: "s2" })).to.deep.equal([1, "2", 1]);
  });

  it("returns 0 for a waiter whose lease already ended and does not revive it", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", ttl: 80 });
    const deadline = await f.redis.zscore(keys("a").leases, "s2:r");
    await waitForLeaseEnd(f.redis, keys("a").leases, "s2:r");
    expect(await renew(f, "a", "s2", 20_000, [], [["r", "o"]])).to.deep.equal([0]);
    expect(await f.redis.zscore(keys("a").leases, "s2:r")).to.equal(deadline);
    expect((await acquire(f, "a", { session: "s3" })).slice(0, 2)).to.deep.equal([2, 1]);
  });

  it("returns 2 for a waiter since granted, renewing the hold it became in its place", async () => {
    await acquire(f, "a", { session: "s1" });
    await acquire(f, "a", { session: "s2", ttl: 1_000 });
    await release(f, "a", { session: "s1" });
    const before = await redisNow(f.redis);
    expect(await renew(f, "a", "s2", 20_000, [], [["r", "o"]])).to.deep.equal([2]);
    const deadline = Number(await f.redis.zscore(keys("a").holders, "s2:o"));
    expect(deadline).to.be.at.least(before + 20_000);
  });

  it("answers one status per entry in order, owners first, matching each against its own set", async () => {
    await acquire(f, "a", { session: "s1", owner: "o1", request: "r1" });
    await acquire(f, "a", { session: "s1", owner: "o3", request: "rq" });
    expect(
      await renew(
        f,
        "a",
        "s1",
        20_000,
        ["o1", "ox"],
        [
          ["rq", "o3"],
          ["ry", "oy"],
        ],
      ),
    ).to.deep.equal(["1 1", 0, 1, 0]);
    // The holder count splits the list: "o3" as a holder and "o1" as a request id are not found.
    expect(await renew(f, "a", "s1", 20_000, ["o3"], [["o1", "ox"]])).to.deep.equal([0, 0]);
  });

  it("renews several locks in one run: per lock its owners' then its pairs' statuses, lock after lock", async () => {
    await acquire(f, "a", { session: "s1", ttl: 1_000 });
    await acquire(f, "b", { session: "s0" });
    await acquire(f, "b", { session: "s1", ttl: 1_000 });
    await acquire(f, "c", { session: "s0" });
    await acquire(f, "c", { session: "s1", ttl: 1_000 });
    await release(f, "c", { session: "s0" });
    const before = await redisNow(f.redis);
    const locks = [
      { name: "a", owners: ["o", "ox"], waiters: [] as [string, string][] },
      { name: "b", owners: ["o"], waiters: [["r", "o"]] as [string, string][] },
      { name: "none", owners: [], waiters: [["r", "o"]] as [string, string][] },
      { name: "c", owners: [], waiters: [["r", "o"]] as [string, string][] },
    ];
    expect(await renewMany(f, "s1", 20_000, locks)).to.deep.equal(["1 1", 0, 0, 1, 0, 2]);
    expect(Number(await f.redis.zscore(keys("a").holders, "s1:o"))).to.be.at.least(before + 20_000);
    expect(Number(await f.redis.zscore(keys("b").leases, "s1:r"))).to.be.at.least(before + 20_000);
    expect(Number(await f.redis.zscore(keys("c").holders, "s1:o"))).to.be.at.least(before + 20_000);
    expect(await f.redis.exists(keys("none").holders, keys("none").leases)).to.equal(0);
  });

  it("keeps the fence only of the locks where it renewed a hold", async () => {
    await acquire(f, "a", { session: "s1", ttl: 1_000 });
    await acquire(f, "b", { session: "s2", ttl: 1_000 });
    const retained = await f.redis.pttl(keys("b").fence);
    const locks = ["a", "b"].map((name) => ({ name, owners: ["o"], waiters: [] as [string, string][] }));
    expect(await renewMany(f, "s1", 200_000, locks)).to.deep.equal(["1 1", 0]);
    expect(await f.redis.pttl(keys("a").fence)).to.be.within(200_000 + 60_000 - 5_000, 200_000 + 60_000);
    expect(await f.redis.pttl(keys("b").fence)).to.be.at.most(retained);
  });

  it("given the session record's key, pushes its expiry to ttl and answers 1 last, after the locks'", async () => {
    await acquire(f, "a", { session: "s1", ttl: 1_000 });
    await f.redis.set(RECORD, "{}", "PX", 1_000);
    const locks = [{ name: "a", owners: ["o"], waiters: [] as [string, string][] }];
    expect(await renewMany(f, "s1", 200_000, locks, RECORD)).to.deep.equal(["1 1", 1]);
    expect(await f.redis.pttl(RECORD)).to.be.within(200_000 - 5_000, 200_000);
    expect(await f.redis.get(RECORD)).to.equal("{}");
  });

  it("given the key of a session record that expired, answers 0 last and does not create it", async () => {
    await acquire(f, "a", { session: "s1", ttl: 1_000 });
    const locks = [{ name: "a", owners: ["o"], waiters: [] as [string, string][] }];
    expect(await renewMany(f, "s1", 20_000, locks, RECORD)).to.deep.equal(["1 1", 0]);
    expect(await f.redis.exists(RECORD)).to.equal(0);
    expect(Number(await f.redis.pttl(keys("a").fence))).to.be.above(20_000);
  });
});
