import { expect } from "chai";
import { Backoff } from "../../client/connection/backoff.js";
import { TurnstileError } from "../../client/turnstile-error.js";

describe("Backoff", () => {
  it("doubles the ceiling from 50 ms up to the 1 s cap by default", () => {
    const backoff = new Backoff({}, () => 1);
    const delays = Array.from({ length: 8 }, () => backoff.nextDelayMs());
    expect(delays).to.deep.equal([50, 100, 200, 400, 800, 1000, 1000, 1000]);
    expect(backoff.attempt).to.equal(8);
  });

  it("draws each delay uniformly below the ceiling (full jitter)", () => {
    const draws = [0, 0.5, 0.25];
    const backoff = new Backoff({ baseMs: 100, factor: 3, maxMs: 10_000 }, () => draws.shift() ?? 0);
    expect([backoff.nextDelayMs(), backoff.nextDelayMs(), backoff.nextDelayMs()]).to.deep.equal([0, 150, 225]);
  });

  it("starts again from the base after reset()", () => {
    const backoff = new Backoff({}, () => 1);
    backoff.nextDelayMs();
    backoff.nextDelayMs();
    backoff.reset();
    expect([backoff.attempt, backoff.nextDelayMs()]).to.deep.equal([0, 50]);
  });

  it("rejects out-of-range options with 'invalid-argument' naming the option", () => {
    const cases: [object, RegExp][] = [
      [{ baseMs: 0 }, /backoff\.baseMs must be a positive number/],
      [{ factor: 0.5 }, /backoff\.factor must be a number >= 1/],
      [{ baseMs: 100, maxMs: 50 }, /backoff\.maxMs must be >= baseMs \(100\)/],
    ];
    for (const [options, message] of cases) {
      const err = (() => {
        try {
          new Backoff(options);
        } catch (e) {
          return e;
        }
      })();
      expect(err).to.be.instanceOf(TurnstileError);
      expect((err as TurnstileError).reason).to.equal("invalid-argument");
      expect((err as Error).message).to.match(message);
    }
  });
});
