import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { type CommandRun, runCommand } from "./harness/run-command.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SCRIPT = join(ROOT, "scripts/check-conflict-markers.sh");

function run(command: string, args: string[], cwd: string): Promise<CommandRun> {
  return runCommand(command, args, { cwd, env: process.env, timeoutMs: 15_000 });
}

// CI (.ci/run) runs this script first; these cases show it catches a merge committed unresolved.
describe("scripts/check-conflict-markers.sh", () => {
  let repo: string;

  beforeEach(async () => {
    repo = mkdtempSync(join(tmpdir(), "turnstile-markers-"));
    mkdirSync(join(repo, "scripts"));
    copyFileSync(SCRIPT, join(repo, "scripts/check-conflict-markers.sh"));
    expect((await run("git", ["init", "-q"], repo)).code).to.equal(0);
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it("fails naming the file and line of each marker in a tracked file", async () => {
    writeFileSync(join(repo, "README.md"), "# Title\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> issue5\n");
    await run("git", ["add", "-A"], repo);
    const check = await run("bash", ["scripts/check-conflict-markers.sh"], repo);
    expect(check.code).to.equal(1);
    expect(check.stderr).to.include("README.md:2:<<<<<<< HEAD");
    expect(check.stderr).to.include("README.md:4:=======");
    expect(check.stderr).to.include("README.md:6:>>>>>>> issue5");
  });

  it("passes when markers appear only in untracked files or not at the start of a line", async () => {
    writeFileSync(join(repo, "notes.md"), "a line that mentions <<<<<<< HEAD in passing\n");
    await run("git", ["add", "-A"], repo);
    writeFileSync(join(repo, "scratch.txt"), "<<<<<<< HEAD\n");
    const check = await run("bash", ["scripts/check-conflict-markers.sh"], repo);
    expect(check.code, check.stderr).to.equal(0);
  });

  it("passes on this repository's tracked files", async () => {
    const check = await run("bash", [SCRIPT], ROOT);
    expect(check.code, check.stderr).to.equal(0);
  });
});
