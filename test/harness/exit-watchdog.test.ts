import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { type CommandRun, runCommand } from "./run-command.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Runs mocha (no config) on one fixture with the watchdog loaded, as .mocharc.cjs loads it. */
function mocha(fixture: string, env: NodeJS.ProcessEnv = {}): Promise<CommandRun> {
  const args = ["node_modules/mocha/bin/mocha.js", "--no-config", "--node-option", "import=tsx", "--extension", "ts"];
  args.push("--require", "test/harness/exit-watchdog.ts", join("test/harness/fixtures", fixture));
  return runCommand(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, TURNSTILE_EXIT_WATCHDOG_MS: "1000", ...env },
    timeoutMs: 30_000,
  });
}

// mocha runs without `exit: true`: the watchdog is what keeps a leaked handle from hanging CI.
describe("test/harness/exit-watchdog.ts", () => {
  it("lets a run whose tests closed everything end by itself, with mocha's exit code", async () => {
    const run = await mocha("closes-everything.ts");
    expect(run.code).to.equal(0);
    expect(run.stdout).to.include("1 passing");
    expect(run.stderr).to.not.include("left handles open");
  });

  it("fails a passing run that left a timer open, naming it", async () => {
    const run = await mocha("leaks-interval.ts");
    expect(run.stdout).to.include("1 passing");
    expect(run.code).to.equal(1);
    expect(run.stderr).to.include("The tests left handles open 1 s after the last suite");
    expect(run.stderr).to.match(/active resources: .*Timeout/);
  });

  it("says where the leaked handle was created with TURNSTILE_TRACE_HANDLES=1", async () => {
    const run = await mocha("leaks-interval.ts", { TURNSTILE_TRACE_HANDLES: "1" });
    expect(run.code).to.equal(1);
    expect(run.stderr).to.include("Timeout created").and.include("leaks-interval.ts");
  });
});
