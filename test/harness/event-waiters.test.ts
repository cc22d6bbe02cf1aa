import { expect } from "chai";
import { EventWaiters } from "./event-waiters.js";

describe("EventWaiters", () => {
  it("resolves take() with the probe's first defined value, checked on each notify()", async () => {
    const waiters = new EventWaiters();
    const items: number[] = [];
    const taken = waiters.take(
      () => items.shift(),
      5000,
      () => "no item",
    );
    items.push(7);
    waiters.notify();
    expect(await taken).to.equal(7);
  });

  it("resolves at once when the condition already holds", async () => {
    await new EventWaiters().until(
      () => true,
      5000,
      () => "never",
    );
  });

  it("rejects with the timeout message when nothing satisfies the wait in time", async () => {
    const waiters = new EventWaiters();
    const error = await waiters
      .until(
        () => false,
        20,
        () => "timed out waiting for x",
      )
      .catch((e: Error) => e);
    expect(error).to.be.an("error").with.property("message", "timed out waiting for x");
  });

  it("rejects every pending wait on cancel(), and later notify() calls change nothing", async () => {
    const waiters = new EventWaiters();
    let probes = 0;
    const pending = [1, 2].map(() =>
      waiters
        .until(
          () => ++probes > 100,
          60_000,
          () => "timed out",
        )
        .catch((e: Error) => e.message),
    );
    waiters.cancel("closed");
    expect(await Promise.all(pending)).to.deep.equal(["closed", "closed"]);
    const before = probes;
    waiters.notify();
    expect(probes).to.equal(before);
  });
});
