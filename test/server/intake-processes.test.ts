import { readFileSync } from "node:fs";
import { expect } from "chai";
import { Redis } from "ioredis";
import { floodBehindStalledOpen, unopenedStreams } from "../../bench/overload/intake-phases.js";
import { type CoordinatorProcess, spawnCoordinator } from "../harness/coordinator-process.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";

/** Resident set size of a process in MiB (Linux /proc). */
function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Math.round(Number(kb ?? 0) / 1024);
}

/** Every key of Redis matching `pattern` (SCAN, so a test never blocks the server). */
async function keysMatching(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== "0");
  return keys;
}

describe("bounded intake of a real turnstile serve process (issue 16, case 3)", () => {
  let redis: TestRedis;
  let inspect: Redis;
  const coordinators: CoordinatorProcess[] = [];
  const serve = async (args: string[] = []) => {
    const c = await spawnCoordinator(redis.url, args);
    // Drained, so a chatty log can never block the coordinator on a full pipe.
    c.process.stdout?.resume();
    c.process.stderr?.resume();
    coordinators.push(c);
    return c;
  };

  before(async () => {
    redis = await startRedis();
    inspect = new Redis(redis.url);
  });
  afterEach(async () => {
    redis.process.kill("SIGCONT");
    await Promise.all(coordinators.splice(0).map((c) => c.kill()));
  });
  after(async () => {
    inspect.disconnect();
    await redis.stop();
  });

  it("takes at most a few MiB of a client streaming acquires behind an Open that a SIGSTOPped Redis does not answer, and stores none of them", async function () {
    this.timeout(60_000);
    const c = await serve();
    const pid = c.process.pid!;
    // Offers 64 MiB for 5 s with Redis stopped (before the fix the coordinator read 641 MiB: RSS +331 MiB).
    const result = await floodBehindStalledOpen(c.address, redis.process.pid!, 64, () => rssMiB(pid));
    expect(result.handedToTransportMiB, "MiB the transport took").to.be.at.most(4);
    expect(result.rssMiB.peak - result.rssMiB.before, "coordinator RSS growth, MiB").to.be.below(48);
    // The Open outlived the 2 s command timeout: its outcome is unknown, and the status says so.
    expect(result.opened).to.equal(false);
    expect(result.endedWith).to.match(/^UNAVAILABLE: .*outcome is unknown/);
    // Requests behind an Open that failed never reach the store.
    expect(await keysMatching(inspect, "turnstile:{behind/*")).to.deep.equal([]);
  });

  it("ends 1,000 streams that never send Open: beyond --max-unopened-streams RESOURCE_EXHAUSTED, the rest DEADLINE_EXCEEDED after --open-timeout", async function () {
    this.timeout(60_000);
    const c = await serve(["--max-unopened-streams", "200", "--open-timeout", "2s"]);
    const pid = c.process.pid!;
    const result = await unopenedStreams(c.address, 1000, () => rssMiB(pid));
    const { DEADLINE_EXCEEDED = 0, RESOURCE_EXHAUSTED = 0, ...other } = result.endedBy;
    expect(other, "streams ended otherwise").to.deep.equal({});
    expect(DEADLINE_EXCEEDED + RESOURCE_EXHAUSTED).to.equal(1000);
    // At least the first 200 waited out their deadline; on a loaded machine a later one may get a freed place.
    expect(DEADLINE_EXCEEDED).to.be.at.least(200);
    expect(RESOURCE_EXHAUSTED).to.be.above(0);
    expect(result.rssMiB.peak - result.rssMiB.before, "coordinator RSS growth, MiB").to.be.below(48);
  });
});
