import { expect } from "chai";
import { Redis } from "ioredis";
import { masterOf, SentinelFailoverWatch } from "../../../server/store/redis/connection/sentinel-failover-watch.js";
import { type SentinelGroup, startSentinelGroup } from "../../harness/sentinel-group.js";

describe("masterOf: the master a Sentinel event is about", () => {
  it("reads a master's event and a replica's event", () => {
    expect(masterOf("master turnstile-failover 127.0.0.1 6379")).to.equal("turnstile-failover");
    expect(masterOf("slave 127.0.0.1:6380 127.0.0.1 6380 @ turnstile-failover 127.0.0.1 6379")).to.equal(
      "turnstile-failover",
    );
    expect(masterOf("0a1b2c 10")).to.equal(undefined);
  });
});

describe("SentinelFailoverWatch against a real Sentinel", function () {
  this.timeout(60_000);
  let group: SentinelGroup;
  let watch: SentinelFailoverWatch | undefined;
  let stoppedPid: number | undefined;

  before(async () => {
    group = await startSentinelGroup(1, 1, { downAfterMs: 60_000, failoverTimeoutMs: 10_000 });
  });
  afterEach(() => {
    if (stoppedPid) process.kill(stoppedPid, "SIGCONT");
    stoppedPid = undefined;
    watch?.close();
    watch = undefined;
  });
  after(async () => {
    await group?.stop();
  });

  /** Resolves with the hooks' calls once `done` holds for them. */
  function watching(masterName: string) {
    const calls: string[] = [];
    let wake = () => {};
    const record = (call: string) => {
      calls.push(call);
      wake();
    };
    watch = new SentinelFailoverWatch(
      group.sentinels,
      masterName,
      {},
      {
        started: (event) => record(`started ${event}`),
        settled: (event) => record(`settled ${event}`),
        heard: (live) => record(`heard ${live}`),
      },
    );
    const until = async (done: (calls: string[]) => boolean) => {
      while (!done(calls)) await new Promise<void>((resolve) => (wake = resolve));
    };
    return { calls, until };
  }

  it("hears SENTINEL FAILOVER start before the promotion, then the switch", async () => {
    const { calls, until } = watching(group.masterName);
    await until((c) => c.includes("heard 1"));
    const replicaPort = await group.masterPort().then(async (port) => {
      const master = new Redis({ port, host: "127.0.0.1" });
      const info = await master.info("replication");
      master.disconnect();
      return Number(/slave0:ip=[^,]+,port=(\d+)/.exec(info)?.[1]);
    });
    const replica = new Redis({ port: replicaPort, host: "127.0.0.1" });
    try {
      // The replica's role when the first announcement arrives: still a replica (the promotion comes after).
      let roleAtStart: string | undefined;
      const firstStart = until((c) => c.some((call) => call.startsWith("started"))).then(async () => {
        roleAtStart = ((await replica.call("ROLE")) as string[])[0];
      });
      await group.failover();
      await firstStart;
      await until((c) => c.includes("settled +switch-master"));
      expect(calls[calls.findIndex((c) => c.startsWith("started"))]).to.equal("started +try-failover");
      expect(roleAtStart).to.equal("slave");
      expect(calls.indexOf("settled +switch-master")).to.be.greaterThan(calls.indexOf("started +try-failover"));
    } finally {
      replica.disconnect();
    }
  });

  it("ignores another master's failover", async () => {
    const { calls, until } = watching("another-master");
    await until((c) => c.includes("heard 1"));
    await group.failover();
    expect(calls.filter((c) => !c.startsWith("heard"))).to.deep.equal([]);
  });

  it("counts a frozen Sentinel as not heard within about a second, and heard again once it answers", async () => {
    const { calls, until } = watching(group.masterName);
    await until((c) => c.includes("heard 1"));
    const sentinel = new Redis(group.sentinels[0]);
    const pid = Number(/process_id:(\d+)/.exec(await sentinel.info("server"))?.[1]);
    sentinel.disconnect();
    process.kill(pid, "SIGSTOP");
    stoppedPid = pid;
    await until((c) => c.includes("heard 0"));
    process.kill(pid, "SIGCONT");
    stoppedPid = undefined;
    await until((c) => c.lastIndexOf("heard 1") > c.indexOf("heard 0"));
    expect(calls.filter((c) => c.startsWith("heard"))).to.deep.equal(["heard 1", "heard 0", "heard 1"]);
  });
});
