import { type ChildProcess, spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { cleanEnv, runCommand } from "../harness/run-command.js";
import { loadedModules } from "./loaded-modules.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
// The repository's own TypeScript devDependency: a stock tsc, run inside the consumer project.
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
const TYPES_NODE_VERSION = JSON.parse(
  readFileSync(join(ROOT, "node_modules/@types/node/package.json"), "utf8"),
).version;
// Dependencies only the coordinator uses: importing the client must load none of them.
const SERVER_ONLY = ["ioredis", "pino", "prom-client", "@grpc/reflection", "grpc-health-check"];

/** What `npm pack --json` says about the tarball it wrote. */
interface Packed {
  filename: string;
  entryCount: number;
  size: number;
  unpackedSize: number;
  files: { path: string }[];
}

describe("the npm package (npm pack, installed into a fresh project)", () => {
  const env = cleanEnv();
  let dir: string;
  let project: string;
  let packed: Packed;
  const node = (args: string[], cwd = project) => runCommand(process.execPath, args, { cwd, env, timeoutMs: 60_000 });

  before(async function () {
    this.timeout(300_000);
    dir = mkdtempSync(join(tmpdir(), "turnstile-pack-"));
    // npm pack runs the `prepare` script (npm run build) first, as npm publish would.
    const pack = await runCommand("npm", ["pack", "--json", "--pack-destination", dir], {
      cwd: ROOT,
      env,
      timeoutMs: 180_000,
    });
    expect(pack.code, `npm pack failed:\n${pack.stdout}\n${pack.stderr}`).to.equal(0);
    [packed] = JSON.parse(pack.stdout.slice(pack.stdout.search(/^\[/m))) as Packed[];
    console.log(
      `      ${packed.filename}: ${packed.entryCount} files, ${packed.size} bytes packed, ${packed.unpackedSize} unpacked`,
    );
    project = join(dir, "consumer");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    for (const file of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, file), join(project, file));
    const install = await runCommand(
      "npm",
      [
        "install",
        join(dir, packed.filename),
        `@types/node@${TYPES_NODE_VERSION}`,
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
      ],
      { cwd: project, env, timeoutMs: 240_000 },
    );
    expect(install.code, `npm install failed:\n${install.stdout}\n${install.stderr}`).to.equal(0);
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("ships the compiled code, the bin and the docs: no sources, tests, benchmarks or examples", () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths).to.include.members([
      "package.json",
      "README.md",
      "bin/turnstile.js",
      "dist/bin/turnstile-cli.js",
      "dist/client/index.js",
      "dist/client/index.d.ts",
      "dist/client/index.js.map",
      "dist/gen/ts/turnstile/v1/turnstile.d.ts",
      "dist/server/cli/serve-command.js",
      "dist/server/store/redis/scripts/acquire.lua",
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

  it("loads only grpc-js, @bufbuild/protobuf and the compiled client and generated code on import", async () => {
    const loaded = await loadedModules(project, env, "turnstile/client");
    const own = loaded.files.filter((f) => f.includes("/node_modules/turnstile/"));
    console.log(`      ${own.length} turnstile modules; packages: ${loaded.packages.join(", ")}`);
    expect(own.filter((f) => !/\/node_modules\/turnstile\/dist\/(client|gen)\/.*\.js$/.test(f))).to.deep.equal([]);
    expect(own).to.include(`${project}/node_modules/turnstile/dist/client/index.js`);
    expect(loaded.importedByTurnstile).to.have.members(["@grpc/grpc-js", "@bufbuild/protobuf"]);
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
    let serve: ChildProcess;
    let output = "";
    let server: { pid: number; port: number };

    before(async function () {
      this.timeout(90_000);
      // No tsx anywhere: it is a devDependency, and NODE_OPTIONS is cleared.
      expect(existsSync(join(project, "node_modules/tsx"))).to.equal(false);
      serve = spawn("npx", ["turnstile", "serve", "--listen", "127.0.0.1:0"], {
        cwd: project,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      serve.stdout?.on("data", (d: Buffer) => {
        output += d.toString();
      });
      serve.stderr?.on("data", (d: Buffer) => {
        output += d.toString();
      });
      server = await listening(serve, () => output, 80_000);
    });

    after(() => {
      for (const pid of [server?.pid, serve?.pid]) {
        try {
          if (pid) process.kill(pid, "SIGKILL");
        } catch {
          // already gone: the test below stopped it
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

    it("stops on SIGTERM to the npx process, leaving no orphaned server process", async function () {
      this.timeout(60_000);
      // 'close' comes only once every process holding the stdout pipe has exited, the server too.
      const closed = new Promise<void>((resolve) => serve.once("close", () => resolve()));
      serve.kill("SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          closed,
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`still running 45 s after SIGTERM:\n${output}`)), 45_000);
          }),
        ]);
      } finally {
        clearTimeout(timer);
      }
      expect(output).to.match(/"msg":"shutting down"/);
      expect(isRunning(server.pid), `server process ${server.pid} still running`).to.equal(false);
    });
  });
});

/** Resolves with the pid and port of the coordinator's "listening" log line; rejects if it exits first. */
function listening(
  child: ChildProcess,
  output: () => string,
  timeoutMs: number,
): Promise<{ pid: number; port: number }> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const complete = output().split("\n").slice(0, -1);
      const line = complete.find((l) => l.includes('"msg":"listening"'));
      if (line) {
        const { pid, port } = JSON.parse(line) as { pid: number; port: number };
        finish(() => resolve({ pid, port }));
      }
    };
    const onExit = (code: number | null) => finish(() => reject(new Error(`exited (${code}):\n${output()}`)));
    const timer = setTimeout(
      () => finish(() => reject(new Error(`not listening after ${timeoutMs} ms:\n${output()}`))),
      timeoutMs,
    );
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      child.stdout?.off("data", check);
      child.off("exit", onExit);
      settle();
    };
    child.stdout?.on("data", check);
    child.once("exit", onExit);
    check();
  });
}

/** Whether `pid` is a live process; an exited one not yet reaped (a zombie, here under PID 1) is not. */
function isRunning(pid: number): boolean {
  if (!existsSync("/proc")) {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
