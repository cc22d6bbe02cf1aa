import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect } from "chai";
import { cleanEnv, runCommand } from "../harness/run-command.js";
import { TestPki } from "../harness/test-pki.js";
import { collectOutput, ended, listening, type ServeOutput } from "./coordinator-output.js";
import { buildStages, parseDockerfile } from "./dockerfile.js";
import { installedPackage, ROOT } from "./installed-package.js";
import { inNetworkOf, inOwnNetwork, ownNetworkAvailable } from "./own-network.js";

// The Dockerfile and deploy/turnstile.service cannot be built or started here (no Docker, no systemd
// as init). This runs what they say, with no override: the image's files are copied and built as its
// COPY and RUN lines say, its ENTRYPOINT + CMD run with its ENV, the unit's ExecStart with its
// Environment; the only stand-ins are directories for the absolute paths (the image's WORKDIR,
// /opt/turnstile, /etc/turnstile with certificates made by openssl, as a volume would mount them).
const DOCKERFILE = readFileSync(join(ROOT, "Dockerfile"), "utf8");
const UNIT = readFileSync(join(ROOT, "deploy/turnstile.service"), "utf8");

/** Replaces each absolute path prefix of `mounts` in `text` by its stand-in directory. */
function mapPaths(text: string, mounts: Record<string, string>): string {
  let mapped = text;
  for (const [from, to] of Object.entries(mounts)) mapped = mapped.replace(new RegExp(`^${from}(?=/|$)`), to);
  return mapped;
}

/** Whether 0.0.0.0:`port` can be bound here (without a network namespace of its own). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer().once("error", () => resolve(false));
    server.listen(port, "0.0.0.0", () => server.close(() => resolve(true)));
  });
}

/** A directory standing for /etc/turnstile: tls/ca.crt, tls/tls.crt and tls/tls.key for 127.0.0.1 and localhost. */
function etcTurnstile(root: string): string {
  const etc = join(root, "etc-turnstile");
  mkdirSync(join(etc, "tls"), { recursive: true });
  const pki = new TestPki(join(etc, "tls"), "ca");
  pki.server("tls");
  return etc;
}

/** A build context as a clean clone has it: the files git tracks (or would, once added), nothing built. */
function cleanContext(root: string): string {
  const context = join(root, "context");
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT })
    .toString()
    .split("\0")
    .filter((file) => file !== "" && existsSync(join(ROOT, file)));
  for (const file of files) {
    mkdirSync(dirname(join(context, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(context, file));
  }
  return context;
}

describe("the container image and the systemd unit, run as written (no overrides)", () => {
  let root: string;
  let isolated: boolean;
  const node = (argv: string[]) => (argv[0] === "node" ? [process.execPath, ...argv.slice(1)] : argv);

  before(async function () {
    isolated = ownNetworkAvailable();
    if (!isolated && !(await portFree(7420))) {
      console.log("    (skipped: 0.0.0.0:7420 is in use and this machine cannot make network namespaces)");
      this.skip();
    }
    root = mkdtempSync(join(tmpdir(), "turnstile-start-"));
  });
  after(async function () {
    this.timeout(120_000);
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** Starts `argv` (in its own network when possible), waits for SERVING from `probe`, SIGTERMs it: exit 0. */
  async function serveProbeStop(argv: string[], options: { cwd: string; env: NodeJS.ProcessEnv }, probe: string[]) {
    const command = isolated ? inOwnNetwork(argv) : argv;
    const serve: ServeOutput = collectOutput(
      spawn(command[0], command.slice(1), { ...options, stdio: ["ignore", "pipe", "pipe"] }),
    );
    try {
      await listening(serve, 60_000);
      const pid = serve.child.pid!;
      const probeArgv = isolated ? inNetworkOf(pid, probe) : probe;
      const check = await runCommand(probeArgv[0], probeArgv.slice(1), { ...options, timeoutMs: 30_000 });
      expect([check.code, check.stdout, check.stderr], serve.text()).to.deep.equal([0, "SERVING\n", ""]);
      const log = serve.text();
      expect(log).to.match(/"listen":"0\.0\.0\.0:7420","port":7420,[^\n]*"tls":true[^\n]*"msg":"listening"/);
      const exited = ended(serve, "exit", 30_000);
      serve.child.kill("SIGTERM");
      expect(await exited, serve.text()).to.equal(0);
    } finally {
      if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill("SIGKILL");
    }
  }

  it("builds the Dockerfile's files from a clean clone and serves TLS with its ENTRYPOINT, CMD and ENV until its HEALTHCHECK says SERVING", async function () {
    this.timeout(900_000);
    const stages = parseDockerfile(DOCKERFILE);
    const dirs = await buildStages(stages, cleanContext(root), join(root, "image"), cleanEnv());
    const image = stages.at(-1)!;
    const mounts = { "/etc/turnstile": etcTurnstile(root), [image.workdir]: dirs.at(-1)! };
    const env = {
      ...cleanEnv(),
      ...Object.fromEntries(Object.entries(image.env).map(([k, v]) => [k, mapPaths(v, mounts)])),
    };
    expect(env.TURNSTILE_LISTEN).to.equal("0.0.0.0:7420");
    await serveProbeStop(
      node([...image.entrypoint, ...image.cmd]),
      { cwd: dirs.at(-1)!, env },
      node(image.healthcheck),
    );
  });

  it("serves TLS with the unit's ExecStart and Environment from an installed tarball, SERVING to `turnstile health` over TLS", async function () {
    this.timeout(600_000);
    const pkg = await installedPackage();
    const line = (key: string) => [...UNIT.matchAll(new RegExp(`^${key}=(.*)$`, "gm"))].map((m) => m[1].trim());
    const etc = etcTurnstile(root);
    const mounts = { "/opt/turnstile": pkg.project, "/etc/turnstile": etc };
    const env: NodeJS.ProcessEnv = { ...pkg.env };
    for (const pair of line("Environment")) {
      const eq = pair.indexOf("=");
      env[pair.slice(0, eq)] = mapPaths(pair.slice(eq + 1), mounts);
    }
    for (const file of line("EnvironmentFile")) {
      const optional = file.startsWith("-");
      const path = mapPaths(file.replace(/^-/, ""), mounts);
      expect(optional || existsSync(path), `EnvironmentFile ${file} is required`).to.equal(true);
    }
    const [execStart] = line("ExecStart");
    const argv = execStart.split(/\s+/).map((word) => mapPaths(word, mounts));
    const turnstile = join(pkg.project, "node_modules/.bin/turnstile");
    // docs/operations.md's health check for the unit: over TLS, trusting the CA beside the certificate.
    const probe = [turnstile, "health", "--server", "localhost:7420", "--tls-ca", join(etc, "tls/ca.crt")];
    await serveProbeStop(argv, { cwd: "/", env }, probe);
  });
});
