import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { runCommand } from "../harness/run-command.js";
import { collectOutput, ended, listening } from "./coordinator-output.js";
import { COORDINATOR, type InstalledPackage, installedPackage, ROOT } from "./installed-package.js";

// The Dockerfile and the systemd unit in docs/operations.md cannot be built or started here; their
// start and health-check commands run from the installed tarball instead, so they stay in step.
const DOCKERFILE = readFileSync(join(ROOT, "Dockerfile"), "utf8");
const OPERATIONS = readFileSync(join(ROOT, "docs/operations.md"), "utf8");

/** The JSON-array command that `pattern` (group 1) finds in the Dockerfile. */
function dockerCommand(pattern: RegExp): string[] {
  const match = DOCKERFILE.match(pattern);
  if (!match) throw new Error(`Dockerfile: no match for ${pattern}`);
  return JSON.parse(match[1]) as string[];
}

describe("the documented start commands, run from the installed package", () => {
  let pkg: InstalledPackage;

  before(async function () {
    this.timeout(420_000);
    pkg = await installedPackage();
  });

  // Starts `command`, waits until it listens, runs `health` against it, then SIGTERMs it.
  async function startCheckStop(command: string[], cwd: string, health: string[]) {
    // The documents listen on 0.0.0.0:7420; tests stay on loopback and take a free port.
    const env = { ...pkg.env, TURNSTILE_LISTEN: "127.0.0.1:0" };
    const serve = collectOutput(spawn(command[0], command.slice(1), { cwd, env, stdio: ["ignore", "pipe", "pipe"] }));
    try {
      const { port } = await listening(serve, 60_000);
      const probe = await runCommand(health[0], health.slice(1), {
        cwd,
        env: { ...env, TURNSTILE_SERVER: `127.0.0.1:${port}` },
        timeoutMs: 30_000,
      });
      expect([probe.code, probe.stdout, probe.stderr]).to.deep.equal([0, "SERVING\n", ""]);
      const exited = ended(serve, "exit", 30_000);
      serve.child.kill("SIGTERM");
      expect(await exited, serve.text()).to.equal(0);
    } finally {
      if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill("SIGKILL");
    }
  }

  it("runs the systemd unit's ExecStart, answers `turnstile health` as SERVING, and exits 0 on SIGTERM", async function () {
    this.timeout(120_000);
    const execStart = OPERATIONS.match(/^ExecStart=(.+)$/m)?.[1]
      .trim()
      .split(/\s+/);
    expect(execStart, "docs/operations.md has no ExecStart= line").to.not.equal(undefined);
    // The unit's install directory is /opt/turnstile; here it is the consumer project.
    const command = execStart!.map((word) => word.replace(/^\/opt\/turnstile(?=\/)/, pkg.project));
    await startCheckStop(command, pkg.project, [join(pkg.project, "node_modules/.bin/turnstile"), "health"]);
  });

  it("runs the Dockerfile's ENTRYPOINT + CMD and its HEALTHCHECK, and exits 0 on SIGTERM", async function () {
    this.timeout(120_000);
    const entrypoint = dockerCommand(/^ENTRYPOINT (\[.*\])$/m);
    const cmd = dockerCommand(/^CMD (\[.*\])$/m);
    const healthcheck = dockerCommand(/^HEALTHCHECK [^\n]*\\\n\s*CMD (\[.*\])$/m);
    // The image's WORKDIR holds the package's dist/ as the installed package directory does.
    const workdir = join(pkg.project, `node_modules/${COORDINATOR}`);
    const node = (argv: string[]) => (argv[0] === "node" ? [process.execPath, ...argv.slice(1)] : argv);
    await startCheckStop(node([...entrypoint, ...cmd]), workdir, node(healthcheck));
  });
});
