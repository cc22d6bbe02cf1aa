import { expect } from "chai";
import { startRedisSentinel, type TestSentinel } from "../harness/redis-sentinel.js";
import { spawnTurnstile } from "../harness/run-turnstile.js";
import { waitForOutput } from "../harness/wait-for-output.js";

// `turnstile serve --redis-sentinel` reads the Sentinels' down-after-milliseconds (1000 in the
// harness) and failover-timeout (10000) at start and says whether the default session TTL covers them.
describe("serve with Sentinels: the session TTL against the Sentinels' failover time", function () {
  this.timeout(60_000);
  let sentinel: TestSentinel;
  // Read from the first byte: the line follows "listening" and may arrive in the same chunk.
  const serve = (defaultTtl: string) =>
    spawnTurnstile(
      [
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--redis-sentinel",
        sentinel.sentinels.map((s) => `${s.host}:${s.port}`).join(","),
        "--redis-master",
        sentinel.masterName,
        "--default-ttl",
        defaultTtl,
      ],
      { timeoutMs: 60_000 },
    );

  before(async () => {
    sentinel = await startRedisSentinel();
  });
  after(async () => {
    await sentinel?.stop();
  });

  it("warns once when the default TTL is below down-after + failover-timeout, naming all three", async () => {
    const child = serve("5s");
    try {
      const [line] = await waitForOutput(child.child, /\{[^\n]*Sentinels' failover time[^\n]*\}/, 15_000);
      const entry = JSON.parse(line);
      expect(entry).to.include({ level: 40, defaultTtlMs: 5000, downAfterMs: 1000, failoverTimeoutMs: 10_000 });
      expect(entry.msg).to.equal(
        "session TTL below the Sentinels' failover time: default-ttl 5000 ms < down-after 1000 ms + failover-timeout 10000 ms; a failover that long ends sessions' locks (raise --default-ttl or lower the Sentinels' timings)",
      );
    } finally {
      child.child.kill("SIGTERM");
      await child.done;
    }
  });

  it("says at info level that a default TTL of 11 s or more covers it", async () => {
    const child = serve("11s");
    try {
      const [line] = await waitForOutput(child.child, /\{[^\n]*Sentinels' failover time[^\n]*\}/, 15_000);
      expect(JSON.parse(line)).to.include({
        level: 30,
        sentinelFailoverMs: 11_000,
        msg: "the default session TTL covers the Sentinels' failover time",
      });
    } finally {
      child.child.kill("SIGTERM");
      await child.done;
    }
  });
});
