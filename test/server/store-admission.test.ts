import { expect } from "chai";
import { StoreAdmission } from "../../server/edge/session/store-admission.js";
import { ServerError } from "../../server/engine/server-error.js";

/** A store operation the test finishes by hand. */
function gate(): { run: () => Promise<void>; started: boolean; finish: () => void } {
  let finish = () => {};
  const g = {
    started: false,
    finish: () => finish(),
    run: () => {
      g.started = true;
      return new Promise<void>((resolve) => {
        finish = resolve;
      });
    },
  };
  return g;
}

const flow = () => ({
  paused: 0,
  resumed: 0,
  pause() {
    this.paused++;
  },
  resume() {
    this.resumed++;
  },
});
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("StoreAdmission", () => {
  it("starts at most maxSessionInFlight requests of one session, in arrival order", async () => {
    const admission = new StoreAdmission({ maxStoreInFlight: 10, maxSessionInFlight: 2, maxSessionQueue: 10 });
    const lane = admission.lane(flow());
    const ops = [gate(), gate(), gate()];
    for (const [i, op] of ops.entries()) lane.submit(String(i), op.run);
    expect(ops.map((o) => o.started)).to.deep.equal([true, true, false]);
    ops[0].finish();
    await tick();
    expect(ops[2].started).to.equal(true);
  });

  it("serves sessions round-robin within maxStoreInFlight, so a flood does not queue ahead of a bystander", async () => {
    const admission = new StoreAdmission({ maxStoreInFlight: 1, maxSessionInFlight: 1, maxSessionQueue: 100 });
    const flood = admission.lane(flow());
    const bystander = admission.lane(flow());
    const floodOps = Array.from({ length: 10 }, gate);
    for (const [i, op] of floodOps.entries()) flood.submit(`f${i}`, op.run);
    const mine = gate();
    bystander.submit("b", mine.run);
    expect([floodOps[0].started, mine.started]).to.deep.equal([true, false]);
    floodOps[0].finish();
    await tick();
    expect([floodOps[1].started, mine.started]).to.deep.equal([false, true]);
    expect(admission.running).to.equal(1);
  });

  it("refuses a request beyond maxSessionQueue with resource-exhausted, and pauses the stream at a quarter of it", () => {
    const admission = new StoreAdmission({ maxStoreInFlight: 1, maxSessionInFlight: 1, maxSessionQueue: 4 });
    const f = flow();
    const lane = admission.lane(f);
    lane.submit("running", gate().run);
    for (let i = 0; i < 4; i++) lane.submit(String(i), gate().run);
    expect(f.paused).to.equal(1);
    let refused: unknown;
    try {
      lane.submit("one-too-many", gate().run);
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(ServerError);
    expect((refused as ServerError).reason).to.equal("resource-exhausted");
    expect((refused as ServerError).message).to.match(
      /more than 4 requests waiting for the store; nothing was changed/,
    );
  });

  it("resumes the stream once the queue has drained to half its pause mark, and drops queued requests when the lane closes", async () => {
    const admission = new StoreAdmission({ maxStoreInFlight: 1, maxSessionInFlight: 1, maxSessionQueue: 8 });
    const f = flow();
    const lane = admission.lane(f);
    const ops = Array.from({ length: 6 }, gate);
    for (const [i, op] of ops.entries()) lane.submit(String(i), op.run);
    expect([f.paused, lane.queue.length]).to.deep.equal([1, 5]);
    for (const op of ops.slice(0, 3)) {
      op.finish();
      await tick();
    }
    expect([f.resumed, lane.queue.length]).to.deep.equal([0, 2]);
    ops[3].finish();
    await tick();
    expect([f.resumed, lane.queue.length]).to.deep.equal([1, 1]);
    lane.close();
    ops[4].finish();
    await tick();
    expect(ops[5].started).to.equal(false);
  });

  it("takes a cancelled acquire out of the queue before it starts", () => {
    const admission = new StoreAdmission({ maxStoreInFlight: 1, maxSessionInFlight: 1, maxSessionQueue: 4 });
    const lane = admission.lane(flow());
    lane.submit("a", gate().run, true);
    const b = gate();
    lane.submit("b", b.run, true);
    expect([lane.withdraw("b"), lane.withdraw("a")]).to.deep.equal([true, false]);
    expect(lane.queue.length).to.equal(0);
  });

  it("leaves a queued release (or any request but an acquire) in the queue when a cancel names its id", async () => {
    const admission = new StoreAdmission({ maxStoreInFlight: 1, maxSessionInFlight: 1, maxSessionQueue: 4 });
    const lane = admission.lane(flow());
    const running = gate();
    lane.submit("running", running.run, true);
    const release = gate();
    lane.submit("rel", release.run);
    expect(lane.withdraw("rel")).to.equal(false);
    running.finish();
    await tick();
    expect(release.started).to.equal(true);
  });
});
