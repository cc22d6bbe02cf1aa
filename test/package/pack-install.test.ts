import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { findGrpcurl, grpcurl, grpcurlRequired } from "../harness/grpcurl.js";
import { runCommand } from "../harness/run-command.js";
import { collectOutput, ended, isRunning, listening, type ServeOutput } from "./coordinator-output.js";
import { installFootprint } from "./install-footprint.js";
import { type InstalledPackage, installedPackage, ROOT } from "./installed-package.js";
import { loadedModules } from "./loaded-modules.js";

// The repository's own TypeScript devDependency: a stock tsc, run inside the consumer project.
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
// Dependencies only the coordinator uses: importing the client must load none of them.
const SERVER_ONLY = ["ioredis", "pino", "prom-client", "@grpc/reflection", "grpc-health-check"];
// What the client (dist/client, dist/gen, dist/wire) imports; the loaded-modules test below checks it.
const CLIENT_DEPENDENCIES = ["@grpc/grpc-js", "@bufbuild/protobuf"];

describe("the npm package (npm pack, installed into a fresh project)", () => {
  let pkg: InstalledPackage;
  const node = (args: string[], cwd = pkg.project) =>
    runCommand(process.execPath, args, { cwd, env: pkg.env, timeoutMs: 60_000 });

  before(async function () {
    this.timeout(420_000);
    pkg = await installedPackage();
    const { filename, entryCount, size, unpackedSize } = pkg.packed;
    console.log(`      ${filename}: ${entryCount} files, ${size} bytes packed, ${unpackedSize} unpacked`);
    const footprint = installFootprint(pkg.project, CLIENT_DEPENDENCIES);
    const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
    console.log(
      `      installed: ${footprint.packages} packages, ${mb(footprint.bytes)} MB; ` +
        `only the coordinator uses ${footprint.serverOnlyPackages} of them, ${mb(footprint.serverOnlyBytes)} MB`,
    );
  });

  it("ships the compiled code, the bin and the docs: no sources, tests, benchmarks or examples", () => {
    const paths = pkg.packed.files.map((f) => f.path);
    expect(paths).to.include.members([
      "package.json",
      "README.md",
      "LICENSE",
      "bin/turnstile.js",
      "dist/bin/turnstile-cli.js",
      "dist/client/index.js",
      "dist/client/index.d.ts",
      "dist/client/index.js.map",
      "dist/gen/ts/turnstile/v1/turnstile.d.ts",
      "dist/server/cli/serve-command.js",
      "dist/server/store/redis/scripts/acquire.lua",
      "dist/server/store/redis/scripts/includes/hand-on.lua",
      "dist/gen/reflection/turnstile.binpb",
      "dist/gen/reflection/health.binpb",
      "dist/proto/turnstile/v1/turnstile.proto",
    ]);
    const stray = paths.filter(
      (p) =>
        !/^(dist\/|docs\/[^/]+\.md$|bin\/turnstile\.js$|package\.json$|README\.md$|LICENSE$)/.test(p) ||
        /\.test\.|\.png$/.test(p) ||
        (p.endsWith(".ts") && !p.endsWith(".d.ts")),
    );
    expect(stray).to.deep.equal([]);
  });

  it("typechecks a TypeScript consumer against the package's own .d.ts files with a stock tsc", async () => {
    const tsc = await node([TSC, "-p", "tsconfig.json"]);
    expect(tsc.code, tsc.stdout + tsc.stderr).to.equal(0);
  });

  it("loads only grpc-js, @bufbuild/protobuf and the compiled client, generated code and shared wire layer on import", async () => {
    const loaded = await loadedModules(pkg.project, pkg.env, "turnstile/client");
    const own = loaded.files.filter((f) => f.includes("/node_modules/turnstile/"));
    console.log(`      ${own.length} turnstile modules; packages: ${loaded.packages.join(", ")}`);
    expect(own.filter((f) => !/\/node_modules\/turnstile\/dist\/(client|gen|wire)\/.*\.js$/.test(f))).to.deep.equal([]);
    expect(own).to.include(`${pkg.project}/node_modules/turnstile/dist/client/index.js`);
    expect(loaded.importedByTurnstile).to.have.members(CLIENT_DEPENDENCIES);
    expect(loaded.packages.filter((p) => SERVER_ONLY.includes(p))).to.deep.equal([]);
  });

  it("exports the client as 'turnstile' and 'turnstile/client', and nothing past the exports map", async () => {
    const probe = await node([
      "--input-type=module",
      "-e",
      `const root = await import("turnstile");
       const client = await import("turnstile/client");
       const deep = await import("turnstile/dist/server/coordinator.js").then(() => "loaded", (e) => e.code);
       console.log(JSON.stringify({ same: root.TurnstileClient === client.TurnstileClient, deep }));`,
    ]);
    expect(probe.code, probe.stderr).to.equal(0);
    expect(JSON.parse(probe.stdout)).to.deep.equal({ same: true, deep: "ERR_PACKAGE_PATH_NOT_EXPORTED" });
  });

  it("resolves 'turnstile/client' inside this repository too, by self-reference to dist/", async () => {
    const probe = await node(
      [
        "--input-type=module",
        "-e",
        `const { TurnstileClient } = await import("turnstile/client");
         console.log(typeof TurnstileClient, import.meta.resolve("turnstile/client"));`,
      ],
      ROOT,
    );
    expect(probe.code, probe.stderr).to.equal(0);
    expect(probe.stdout.trim()).to.equal(`function file://${ROOT}dist/client/index.js`);
  });

  describe("npx turnstile serve, from the installed package", () => {
    let serve: ServeOutput;
    let server: { pid: number; port: number };

    before(async function () {
      this.timeout(90_000);
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

    it("answers the README's client example, run as plain .mjs: acquire, withLock, tryAcquire, release", async () => {
      const run = await node(["client-example.mjs", `127.0.0.1:${server.port}`]);
      expect(run.code, run.stderr).to.equal(0);
      const result = JSON.parse(run.stdout) as { tokens: string[]; tryAcquired: boolean };
      expect(result.tryAcquired).to.equal(true);
      expect(result.tokens).to.have.length(2);
      expect(BigInt(result.tokens[1]) > BigInt(result.tokens[0]), result.tokens.join(" < ")).to.equal(true);
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
