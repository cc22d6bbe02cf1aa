import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { categoryTimes, cpuProfileSummary } from "../../bench/report/cpu-profile-summary.js";

/** A .cpuprofile whose frames (function, url) each got the given µs of self time, one sample each. */
function writeProfile(dir: string, frames: [string, string, number][]): void {
  mkdirSync(dir, { recursive: true });
  const nodes = frames.map(([functionName, url], i) => ({ id: i + 1, callFrame: { functionName, url } }));
  const profile = { nodes, samples: nodes.map((n) => n.id), timeDeltas: frames.map(([, , us]) => us) };
  writeFileSync(join(dir, "CPU.20261128.230000.42.0.001.cpuprofile"), JSON.stringify(profile));
}

describe("bench: the coordinators' CPU profile summary (--profile)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "turnstile-profile-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("counts self time by category, leaving idle and start-up out of the busy time", () => {
    writeProfile(dir, [
      ["(idle)", "", 5000],
      ["wrapSafe", "node:internal/modules/cjs/loader", 700],
      ["build", "file:///x/dist/server/store/redis/scripts/runner/script-command.js", 300],
      ["acquire", "file:///x/dist/server/engine/locks/lock-table.js", 200],
      ["returnReply", "file:///x/node_modules/ioredis/built/DataHandler.js", 100],
      ["(garbage collector)", "", 400],
    ]);
    const times = categoryTimes(dir)!;
    expect(times.busyUs).to.equal(1000);
    expect(Object.fromEntries(times.byCategory)).to.deep.equal({
      "Turnstile's Redis store (server/store/redis/)": 300,
      "Turnstile server code (server/, the rest)": 200,
      ioredis: 100,
      "garbage collection": 400,
    });
  });

  it("puts the embedded-store coordinator's shares beside the Redis-backed one's, reading neither's subfolder as the other", () => {
    writeProfile(dir, [
      ["build", "file:///x/dist/server/store/redis/scripts/runner/script-command.js", 500],
      ["acquire", "file:///x/dist/server/engine/locks/lock-table.js", 500],
    ]);
    writeProfile(join(dir, "embedded"), [
      ["acquire", "file:///x/dist/server/engine/locks/lock-table.js", 300],
      ["(garbage collector)", "", 100],
    ]);
    const text = cpuProfileSummary(dir, join(dir, "embedded"))!;
    expect(text).to.include("| category | on Redis | embedded store |");
    expect(text).to.include("| Turnstile's Redis store (server/store/redis/) | 50.0% | 0.0% |");
    expect(text).to.include("| Turnstile server code (server/, the rest) | 50.0% | 75.0% |");
    expect(text).to.include("| garbage collection | 0.0% | 25.0% |");
    expect(cpuProfileSummary(dir)).to.include("| category | share of busy time |");
  });

  it("has nothing to say without a profile", () => {
    expect(cpuProfileSummary(dir)).to.equal(undefined);
  });
});
