import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { findGrpcurl, grpcurl, grpcurlRequired } from "../harness/grpcurl.js";
import { runCommand } from "../harness/run-command.js";
import { collectOutput, ended, isRunning, listening, type ServeOutput } from "./coordinator-output.js";
import {
  CLIENT,
  COORDINATOR,
  type InstalledPackage,
  installedClient,
  installedPackage,
  packedPackages,
} from "./installed-package.js";

// Both tarballs are packed and installed once per test run (installed-package.ts), shared with
// pack-install.test.ts, which checks what the installs hold; this suite serves from them.
describe("the npm packages (npm pack of both, installed into fresh projects), serving", () => {
  before(async function () {
    this.timeout(420_000);
    await packedPackages();
  });

  describe(`${COORDINATOR} with its client, installed together`, () => {
    let pkg: InstalledPackage;
    const node = (project: InstalledPackage, args: string[], cwd = project.project) =>
      runCommand(process.execPath, args, { cwd, env: project.env, timeoutMs: 60_000 });

    before(async function () {
      this.timeout(420_000);
      pkg = await installedPackage();
    });

    describe("npx turnstile serve, from the installed package", () => {
      let serve: ServeOutput;
      let server: { pid: number; port: number };
      let clientOnly: InstalledPackage;

      before(async function () {
        this.timeout(420_000);
        clientOnly = await installedClient();
        // No tsx anywhere: it is a devDependency, and NODE_OPTIONS is cleared.
        expect(existsSync(join(pkg.project, "node_modules/tsx"))).to.equal(false);
        const child = spawn("npx", ["turnstile", "serve", "--listen", "127.0.0.1:0"], {
          cwd: pkg.project,
          env: pkg.env,
          stdio: ["ignore", "pipe", "pipe"],
        });
        serve = collectOutput(child);
        server = await listening(serve, 80_000);
      });

      after(() => {
        for (const pid of [server?.pid, serve?.child.pid]) {
          try {
            if (pid) process.kill(pid, "SIGKILL");
          } catch {
            // already gone: the last test stopped it
          }
        }
      });

      it(`answers the README's client example, run as plain .mjs from the ${CLIENT}-only install: acquire, withLock, tryAcquire, release`, async () => {
        const run = await node(clientOnly, ["client-example.mjs", `127.0.0.1:${server.port}`]);
        expect(run.code, run.stderr).to.equal(0);
        const result = JSON.parse(run.stdout) as { tokens: string[]; tryAcquired: boolean };
        expect(result.tryAcquired).to.equal(true);
        expect(result.tokens).to.have.length(2);
        expect(BigInt(result.tokens[1]) > BigInt(result.tokens[0]), result.tokens.join(" < ")).to.equal(true);
      });

      it("runs `turnstile lock` from the full install: COMMAND runs under the lock, with its name and fencing token", async () => {
        const lock = await runCommand(
          join(pkg.project, "node_modules/.bin/turnstile"),
          [
            "lock",
            "--server",
            `127.0.0.1:${server.port}`,
            "--wait",
            "10s",
            "cli/job",
            "--",
            process.execPath,
            "-e",
            "console.log(process.env.TURNSTILE_LOCK_NAME, process.env.TURNSTILE_FENCING_TOKEN)",
          ],
          { cwd: pkg.project, env: pkg.env, timeoutMs: 60_000 },
        );
        expect(lock.code, lock.stderr).to.equal(0);
        expect(lock.stdout).to.match(/^cli\/job \d+\n$/);
      });

      it("serves reflection from the packaged descriptor sets: stock grpcurl describes LockService and calls Health/Check", async function () {
        const binary = findGrpcurl();
        if (binary === undefined) {
          if (grpcurlRequired())
            throw new Error("grpcurl not found in .tools/bin or on PATH: run scripts/install-grpcurl.sh");
          console.error(
            "      skipped: grpcurl not found in .tools/bin or on PATH (scripts/install-grpcurl.sh installs it)",
          );
          this.skip();
        }
        const address = `127.0.0.1:${server.port}`;
        const [described, health] = await Promise.all([
          grpcurl(binary, [address, "describe", "turnstile.v1.LockService"]),
          grpcurl(binary, [address, "grpc.health.v1.Health/Check"]),
        ]);
        expect([described.code, health.code], described.stderr + health.stderr).to.deep.equal([0, 0]);
        expect(described.stdout).to.match(/rpc Session \( stream \.turnstile\.v1\.SessionRequest \)/);
        expect(JSON.parse(health.stdout)).to.deep.equal({ status: "SERVING" });
      });

      it("exits 3 with JSON lines, one of them the fatal 'cannot start', and one stderr line with a hint, when its port is taken (by the server above)", async () => {
        const args = ["turnstile", "serve", "--listen", `127.0.0.1:${server.port}`];
        const taken = await runCommand("npx", args, { cwd: pkg.project, env: pkg.env, timeoutMs: 60_000 });
        expect(taken.code, taken.stderr).to.equal(3);
        // npm's own warnings (e.g. about this machine's npmrc) are npx's, not the coordinator's.
        const ours = taken.stderr.split("\n").filter((line) => line !== "" && !line.startsWith("npm warn "));
        // The one plain line, for a person at a terminal (docs/operations.md, "Logs and exit codes").
        const said = ours.filter((line) => line.startsWith("turnstile serve: "));
        expect(said).to.have.length(1);
        expect(said[0]).to.include("address already in use: another process listens there");
        const lines = [...taken.stdout.split("\n"), ...ours.filter((l) => !said.includes(l))].filter((l) => l !== "");
        const logged = lines.map((line) => JSON.parse(line) as { level: number; msg: string; exitCode?: number });
        expect(logged.filter((l) => l.level === 60).map((l) => [l.msg, l.exitCode])).to.deep.equal([
          [`cannot start: cannot listen on 127.0.0.1:${server.port} (gRPC): address already in use`, 3],
        ]);
      });

      it("stops on SIGTERM to the npx process, leaving no orphaned server process", async function () {
        this.timeout(60_000);
        // 'close' comes only once every process holding the stdout pipe has exited, the server too.
        const closed = ended(serve, "close", 45_000);
        serve.child.kill("SIGTERM");
        await closed;
        expect(serve.text()).to.match(/"msg":"shutting down"/);
        expect(isRunning(server.pid), `server process ${server.pid} still running`).to.equal(false);
      });
    });
  });
});
