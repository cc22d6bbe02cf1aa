import { expect } from "chai";
import { LeaseClock } from "../client/locks/lease-clock.js";

function fakeClock(startMs = 1_000): { now: () => number; advance: (ms: number) => void } {
  let nowMs = startMs;
  return {
    now: () => nowMs,
    advance: (ms) => {
      nowMs += ms;
    },
  };
}

describe("LeaseClock", () => {
  it("defaults the safety margin to min(2000, ttl / 10) and follows TTL changes", () => {
    const leases = new LeaseClock<string>({ ttlMs: 15_000 });
    expect(leases.safetyMarginMs).to.equal(1_500);
    leases.setTtl(60_000);
    expect(leases.safetyMarginMs).to.equal(2_000);
    leases.setTtl(1_000);
    expect(leases.safetyMarginMs).to.equal(100);
  });

  it("keeps a fixed safety margin when one is given", () => {
    const leases = new LeaseClock<string>({ ttlMs: 15_000, safetyMarginMs: 300 });
    leases.setTtl(60_000);
    expect(leases.safetyMarginMs).to.equal(300);
  });

  it("ends a lease at acquire send time + ttl − margin before any keepalive is confirmed", () => {
    const clock = fakeClock();
    const leases = new LeaseClock<string>({ ttlMs: 10_000, safetyMarginMs: 500, now: clock.now });
    leases.track("a", 1_000);
    expect(leases.lastConfirmedSendMs).to.equal(Number.NEGATIVE_INFINITY);
    expect(leases.deadlineOf("a")).to.equal(10_500);
    expect(leases.deadlineOf("unknown")).to.equal(undefined);
  });

  it("measures a confirmed renewal from when the keepalive was sent, not when it was acked", () => {
    const clock = fakeClock();
    const leases = new LeaseClock<string>({ ttlMs: 10_000, safetyMarginMs: 500, now: clock.now });
    leases.track("a", 1_000);
    clock.advance(3_000);
    expect(leases.keepAliveSent(1n)).to.equal(4_000);
    clock.advance(2_500);
    expect(leases.keepAliveAcked(1n)).to.equal(true);
    expect(leases.lastConfirmedSendMs).to.equal(4_000);
    expect(leases.deadlineOf("a")).to.equal(13_500);
  });

  it("takes the later of acquire send time and confirmed keepalive for a lock acquired after it", () => {
    const clock = fakeClock();
    const leases = new LeaseClock<string>({ ttlMs: 10_000, safetyMarginMs: 500, now: clock.now });
    leases.keepAliveSent(1n);
    leases.keepAliveAcked(1n);
    leases.track("late", 5_000);
    expect(leases.deadlineOf("late")).to.equal(14_500);
  });

  it("ignores acks for unknown seqs and acks that confirm nothing newer", () => {
    const clock = fakeClock();
    const leases = new LeaseClock<string>({ ttlMs: 10_000, safetyMarginMs: 0, now: clock.now });
    leases.keepAliveSent(1n);
    clock.advance(1_000);
    leases.keepAliveSent(2n);
    expect(leases.keepAliveAcked(7n)).to.equal(false);
    expect(leases.keepAliveAcked(2n)).to.equal(true);
    expect(leases.lastConfirmedSendMs).to.equal(2_000);
    // seq 1 was dropped when seq 2 was acked: a late ack for it can not move time backwards.
    expect(leases.keepAliveAcked(1n)).to.equal(false);
    expect(leases.keepAliveAcked(2n)).to.equal(false);
    expect(leases.lastConfirmedSendMs).to.equal(2_000);
  });

  it("renews only the keys a resume confirmed, from the resume's send time, never backwards", () => {
    const clock = fakeClock();
    const leases = new LeaseClock<string>({ ttlMs: 10_000, safetyMarginMs: 500, now: clock.now });
    leases.track("kept", 1_000);
    leases.track("other", 1_000);
    leases.confirmFor("kept", 6_000);
    leases.confirmFor("kept", 2_000);
    leases.confirmFor("untracked", 6_000);
    expect([leases.deadlineOf("kept"), leases.deadlineOf("other")]).to.deep.equal([15_500, 10_500]);
    expect(leases.deadlineOf("untracked")).to.equal(undefined);
    expect(leases.lastConfirmedSendMs).to.equal(Number.NEGATIVE_INFINITY);
    expect(leases.takeExpired(12_000)).to.deep.equal(["other"]);
  });

  it("does not extend leases while keepalives go unacknowledged", () => {
    const clock = fakeClock();
    const leases = new LeaseClock<string>({ ttlMs: 9_000, safetyMarginMs: 900, now: clock.now });
    leases.track("a", 1_000);
    for (let seq = 1n; seq <= 3n; seq++) {
      clock.advance(3_000);
      leases.keepAliveSent(seq);
    }
    expect(leases.deadlineOf("a")).to.equal(9_100);
    expect(leases.takeExpired()).to.deep.equal(["a"]);
  });

  it("reports the earliest deadline over all tracked leases", () => {
    const clock = fakeClock();
    const leases = new LeaseClock<string>({ ttlMs: 10_000, safetyMarginMs: 1_000, now: clock.now });
    expect(leases.nextDeadlineMs()).to.equal(undefined);
    leases.track("b", 3_000);
    leases.track("a", 2_000);
    expect(leases.nextDeadlineMs()).to.equal(11_000);
    leases.untrack("a");
    expect(leases.nextDeadlineMs()).to.equal(12_000);
  });

  it("moves every deadline to the confirmed send time once a keepalive is acked", () => {
    const clock = fakeClock();
    const leases = new LeaseClock<string>({ ttlMs: 10_000, safetyMarginMs: 1_000, now: clock.now });
    leases.track("a", 1_000);
    leases.track("b", 2_000);
    clock.advance(5_000);
    leases.keepAliveSent(1n);
    leases.keepAliveAcked(1n);
    expect(leases.deadlineOf("a")).to.equal(15_000);
    expect(leases.deadlineOf("b")).to.equal(15_000);
    expect(leases.nextDeadlineMs()).to.equal(15_000);
  });

  it("takes exactly the leases whose deadline has passed, at the deadline itself included", () => {
    const clock = fakeClock(0);
    const leases = new LeaseClock<string>({ ttlMs: 10_000, safetyMarginMs: 1_000, now: clock.now });
    leases.track("a", 1_000);
    leases.track("b", 2_000);
    clock.advance(9_999);
    expect(leases.takeExpired()).to.deep.equal([]);
    clock.advance(1);
    expect(leases.takeExpired()).to.deep.equal(["a"]);
    expect(leases.deadlineOf("a")).to.equal(undefined);
    expect(leases.takeExpired(11_000)).to.deep.equal(["b"]);
    expect(leases.nextDeadlineMs()).to.equal(undefined);
  });

  it("computes deadlines with the TTL now in force", () => {
    const clock = fakeClock();
    const leases = new LeaseClock<string>({ ttlMs: 10_000, safetyMarginMs: 0, now: clock.now });
    leases.track("a", 1_000);
    leases.setTtl(4_000);
    expect(leases.ttlMs).to.equal(4_000);
    expect(leases.deadlineOf("a")).to.equal(5_000);
  });

  it("reads performance.now() when no clock is injected", () => {
    const leases = new LeaseClock<string>({ ttlMs: 10_000 });
    const before = performance.now();
    const sentAtMs = leases.keepAliveSent(1n);
    expect(sentAtMs).to.be.within(before, performance.now());
  });
});
