import { status } from "@grpc/grpc-js";
import { expect } from "chai";
import { Redis } from "ioredis";
import { RawSession } from "../harness/raw-session.js";
import { RawWatch } from "../harness/raw-watch.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, keepAliveMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

describe("Watch while Redis is stalled", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  let client: Redis;
  const opened: { close(): void }[] = [];

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
    client = new Redis(redis.url);
  });
  afterEach(() => {
    redis.process.kill("SIGCONT");
    for (const o of opened.splice(0)) o.close();
  });
  after(async () => {
    client.disconnect();
    await coord.stop();
    await redis.stop();
  });

  // Each case: SIGSTOP redis-server, start a watch, expect UNAVAILABLE within the 2 s command
  // timeout (plus room for a loaded machine), then SIGCONT and check a bystander's lock survived.
  const cases: [string, boolean][] = [
    ["a lock nobody on this coordinator watches yet (its SUBSCRIBE hangs)", false],
    ["a lock already watched here (its snapshot read hangs)", true],
  ];
  for (const [i, [what, alreadyWatched]] of cases.entries()) {
    it(`answers UNAVAILABLE within the command timeout for ${what}`, async function () {
      this.timeout(30_000);
      const name = `stall/w${i}`;
      const bystander = new RawSession(coord.address);
      opened.push(bystander);
      await bystander.open(30_000);
      bystander.send(acquireMsg("keep", `stall/bystander${i}`));
      await bystander.next("acquired");
      if (alreadyWatched) {
        const first = new RawWatch(coord.address, name);
        opened.push(first);
        await first.snapshot();
      }

      redis.process.kill("SIGSTOP");
      const started = performance.now();
      const w = new RawWatch(coord.address, name);
      opened.push(w);
      const st = await w.status(10_000);
      const tookMs = performance.now() - started;
      redis.process.kill("SIGCONT");
      expect([st.code, st.details]).to.deep.equal([status.UNAVAILABLE, "store unavailable: watch again later"]);
      expect(tookMs).to.be.below(8_000);

      // Once Redis answers again a new watch gets its snapshot, and the bystander still holds.
      const again = new RawWatch(coord.address, name);
      opened.push(again);
      expect((await again.snapshot(10_000)).holders).to.deep.equal([]);
      bystander.send(keepAliveMsg(1));
      await bystander.next("keepAliveAck", () => true, 10_000);
      expect(await client.zrange(`turnstile:{stall/bystander${i}}:holders`, 0, "-1")).to.have.length(1);
    });
  }
});
