import { expect } from "chai";
import { TurnstileClient } from "../../client/index.js";
import { type ChildEvents, spawnCandidate } from "../harness/child-events.js";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { LeaderLog } from "../harness/leader-log.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { waitForQueue } from "../harness/wait-for-queue.js";

const TTL_MS = 1500;

describe("elections across processes", () => {
  let redis: TestRedis;
  let a: CoordinatorProcess;
  let b: CoordinatorProcess;
  const candidates: ChildEvents[] = [];
  const clients: TurnstileClient[] = [];
  const logs: LeaderLog[] = [];
  const client = (address: string, ttlMs = 10_000) => {
    const c = new TurnstileClient(address, { ttlMs });
    clients.push(c);
    return c;
  };
  const candidate = (address: string, name: string, value: string) => {
    const c = spawnCandidate(address, name, TTL_MS, value);
    candidates.push(c);
    return c;
  };
  const observe = (address: string, name: string) => {
    const log = new LeaderLog(client(address).election(name));
    logs.push(log);
    return log;
  };
  const alive = (c: ChildEvents) => c.child.exitCode === null && c.child.signalCode === null;

  before(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([spawnCoordinator(redis.url), spawnCoordinator(redis.url)]);
  });
  afterEach(async () => {
    await Promise.all(candidates.splice(0).map((c) => c.kill()));
    await Promise.all(logs.splice(0).map((l) => l.stop()));
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  });
  after(async () => {
    await Promise.all([a.kill(), b.kill()]);
    await redis.stop();
  });

  it("keeps one leader among 5 candidates on 2 coordinators, replaces a SIGKILLed leader within lease + 1 s, and shows observers on both coordinators the same leaders", async function () {
    this.timeout(60_000);
    const name = "processes/five";
    const onA = observe(a.address, name);
    const onB = observe(b.address, name);
    await Promise.all([onA, onB].map((log) => log.until(() => log.current === null, "no leader yet")));
    for (let i = 0; i < 5; i++) candidate(i % 2 === 0 ? a.address : b.address, name, `candidate-${i}`);
    await waitForQueue(redis.url, name, 4, 15_000);
    const elected: bigint[] = [];
    for (let round = 0; round < 3; round++) {
      const leaders = candidates.filter((c) => alive(c) && c.find("elected"));
      expect(leaders, `round ${round}: live leaders`).to.have.length(1);
      const leader = leaders[0];
      elected.push(BigInt(leader.find("elected")!.token as string));
      expect((await client(a.address).election(name).leader())?.fencingToken).to.equal(elected[round]);
      const killedAt = Date.now();
      await leader.kill();
      const next = await Promise.any(candidates.filter(alive).map((c) => c.next("elected", TTL_MS + 5_000)));
      expect(next.atWallMs - killedAt, `round ${round}: time to a new leader`).to.be.below(TTL_MS + 1000);
      expect(BigInt(next.token as string) > elected[round]).to.equal(true);
    }
    elected.push(BigInt(candidates.find((c) => alive(c) && c.find("elected"))!.find("elected")!.token as string));
    expect(candidates.filter((c) => alive(c) && c.find("elected"))).to.have.length(1);
    for (const log of [onA, onB]) await log.until(() => log.tokens.length >= elected.length, "every leader");
    expect(onA.tokens).to.deep.equal(elected);
    expect(onB.tokens).to.deep.equal(elected);
  });

  it("fires a paused leader's signal before the next leader is elected, and observers see the change", async function () {
    this.timeout(30_000);
    const name = "processes/paused";
    const log = observe(b.address, name);
    const leader = candidate(a.address, name, "paused");
    const first = await leader.next("elected");
    const next = candidate(b.address, name, "next");
    await waitForQueue(redis.url, name, 1);
    await log.until(() => log.tokens.length === 1, "the first leader");
    leader.command("freeze");
    const frozen = await leader.next("frozen");
    const elected = await next.next("elected", TTL_MS + 5_000);
    // Told first: the paused leader's own deadline was behind it when the next one was elected.
    expect(frozen.deadlineWallMs as number).to.be.below(elected.atWallMs);
    expect(elected.atWallMs - frozen.atWallMs).to.be.below(TTL_MS + 1000);
    await log.until(() => log.tokens.length === 2, "the next leader");
    expect(log.tokens).to.deep.equal([BigInt(first.token as string), BigInt(elected.token as string)]);
    leader.child.kill("SIGCONT");
    leader.command("report");
    const report = await leader.next("report");
    expect([report.aborted, report.error]).to.deep.equal([true, "LostLockError"]);
    expect(["lease-unconfirmed", "expired"]).to.include(report.lostReason);
  });

  it("never returns a phantom leader: a grant that arrives after the candidate's lease lapsed rejects the campaign", async function () {
    this.timeout(30_000);
    const name = "processes/phantom";
    const leader = await client(a.address, TTL_MS).election(name).campaign("first");
    const phantom = candidate(a.address, name, "phantom");
    await waitForQueue(redis.url, name, 1);
    const behind = client(b.address).election(name).campaign("behind");
    await waitForQueue(redis.url, name, 2);
    phantom.command("freeze");
    await phantom.next("frozen");
    // The grant goes to the paused candidate and waits in its socket while its lease runs out.
    await leader.resign();
    const successor = await behind;
    phantom.child.kill("SIGCONT");
    const failed = await phantom.next("campaign-failed");
    expect([failed.error, failed.lostReason]).to.deep.equal(["LostLockError", "lease-unconfirmed"]);
    expect(phantom.find("elected")).to.equal(undefined);
    expect(successor.fencingToken).to.equal(leader.fencingToken + 2n);
    expect(successor.lost).to.equal(false);
    await successor.resign();
  });
});
