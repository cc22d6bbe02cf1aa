import { expect } from "chai";
import { boardStats } from "../../bench/shapes/board-events.js";
import { parseRedissonOutput } from "../../bench/shapes/redisson-lines.js";
import { busiest } from "../../bench/shapes/scale-out.js";

const ms = 1e6; // ns

describe("bench shapes", () => {
  describe("boardStats()", () => {
    it("times each hand-off from the release's start to the next entry, inside the window", () => {
      const events = [
        { kind: "enter", who: 0, t: 0 },
        { kind: "issued", who: 1, t: 0.5 * ms },
        { kind: "release", who: 0, t: 1 * ms },
        { kind: "enter", who: 1, t: 1.4 * ms },
        { kind: "issued", who: 0, t: 1.6 * ms },
        { kind: "release", who: 1, t: 2 * ms },
        { kind: "enter", who: 0, t: 2.3 * ms },
      ] as const;
      const stats = boardStats(events, 2, 0, 10 * ms);
      expect(stats.gapsMs.map((g) => Number(g.toFixed(3)))).to.deep.equal([0.4, 0.3]);
      expect(stats.counts).to.deep.equal([1, 1]);
      expect(stats.toWaiter).to.equal(2);
      expect(stats.violations).to.equal(0);
    });

    it("counts an entry while another contender still holds the lock as a violation", () => {
      const events = [
        { kind: "enter", who: 0, t: 0 },
        { kind: "enter", who: 1, t: 1 },
      ] as const;
      expect(boardStats(events, 2, 0, 10).violations).to.equal(1);
    });

    it("leaves out hand-offs whose release came before the window", () => {
      const events = [
        { kind: "release", who: 0, t: 1 },
        { kind: "enter", who: 1, t: 5 },
      ] as const;
      expect(boardStats(events, 2, 3, 10).gapsMs).to.deep.equal([]);
    });
  });

  describe("parseRedissonOutput()", () => {
    it("turns the harness's lines into hand-off and spread rows, ignoring other output", () => {
      const out = [
        "some JVM warning",
        '{"workload":"handoff","lock":"rlock","n":8,"ops":4,"seconds":2,"cpuSeconds":0.5,"violations":0,"counts":[2,2],"samplesMs":[0.4,0.2,0.3,0.1]}',
        '{"workload":"spread","lock":"fair","n":16,"ops":10,"seconds":1,"cpuSeconds":0.1,"violations":0,"counts":[],"samplesMs":[1,2]}',
      ].join("\n");
      const { handOff, spread } = parseRedissonOutput(out);
      expect(handOff).to.have.length(1);
      expect(handOff[0]).to.include({
        impl: "redisson-rlock",
        contenders: 8,
        handOffs: 4,
        handOffsPerS: 2,
        fairness: 1,
      });
      expect(handOff[0].gapsMs).to.deep.equal([0.1, 0.2, 0.3, 0.4]);
      expect(handOff[0].counters).to.deep.equal({ seconds: 2, clientCpuSeconds: 0.5 });
      expect(spread[0]).to.include({ impl: "redisson-fair", workers: 16, cyclesPerS: 10 });
    });

    it("names a JSON line that is not a harness result", () => {
      expect(() => parseRedissonOutput('{"workload":"other"}')).to.throw(/not a result line/);
    });

    it("reads each hand-off line's discipline (none printed: after-turn) and refuses an unknown one", () => {
      const line = (d: string) =>
        `{"workload":"handoff",${d}"lock":"fair","n":8,"ops":2,"seconds":1,"cpuSeconds":0.1,"violations":0,"counts":[1,1],"samplesMs":[0.5,0.7]}`;
      const { handOff } = parseRedissonOutput([line('"discipline":"at-once",'), line("")].join("\n"));
      expect(handOff.map((h) => [h.impl, h.discipline])).to.deep.equal([
        ["redisson-fair", "at-once"],
        ["redisson-fair", "after-turn"],
      ]);
      expect(() => parseRedissonOutput(line('"discipline":"sometimes",'))).to.throw(/not a result line/);
    });
  });

  describe("busiest()", () => {
    it("names the process with the largest share of a core", () => {
      expect(busiest({ coordinatorCores: [0.4, 0.9], clientCoresMax: 0.5, redisCores: 0.3 })).to.deep.equal({
        process: "coordinator 2",
        cores: 0.9,
      });
      expect(busiest({ coordinatorCores: [0.2], clientCoresMax: 0.1, redisCores: 0.7 }).process).to.equal("Redis");
    });
  });
});
