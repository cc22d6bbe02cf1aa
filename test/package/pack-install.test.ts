import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { runCommand } from "../harness/run-command.js";
import { installedTree, packageName } from "./install-footprint.js";
import {
  CLIENT,
  COORDINATOR,
  type InstalledPackage,
  installedClient,
  installedPackage,
  type Packed,
  type PackedPackages,
  packedPackages,
  ROOT,
} from "./installed-package.js";
import { loadedModules } from "./loaded-modules.js";

// The repository's own TypeScript devDependency: a stock tsc, run inside the consumer project.
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
// Dependencies only the coordinator uses: the client package must neither install nor load any of them.
const SERVER_ONLY = ["ioredis", "pino", "prom-client", "@grpc/reflection", "grpc-health-check"];
const serverOnly = (name: string) => SERVER_ONLY.includes(name) || name.startsWith("@opentelemetry/");
// What the client package loads on import; the loaded-modules tests below check that it imports exactly these.
const CLIENT_RUNTIMES = ["@bufbuild/protobuf", "@grpc/grpc-js"];
// The client package's dependencies: the runtimes, and jose, which verifyFencingProof loads on first use.
const CLIENT_DEPENDENCIES = [...CLIENT_RUNTIMES, "jose"];
// What a client-only install may take on disk: measured at 12.6 MB for 0.2.0 — protobufjs 3.1, grpc-js
// 2.8, @types/node 2.7 (a dependency of protobufjs, which grpc-js's proto-loader brings), @bufbuild/protobuf
// 2.1, the client itself 0.9 (half of it source maps) — against 33.5 MB for the coordinator's install;
// 13.1 MB with jose (fencing proofs, issue 33) and the client's fencing/ modules (this test prints it).
const CLIENT_INSTALL_BOUND_BYTES = 14e6;

// What npm puts in every tarball besides the files list.
const EVERY_PACKAGE = ["package.json", "README.md", "LICENSE"];

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
const paths = (packed: Packed) => packed.files.map((f) => f.path);
const installedManifest = (project: string, name: string) =>
  JSON.parse(readFileSync(join(project, "node_modules", name, "package.json"), "utf8")) as {
    version: string;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };

describe("the npm packages (npm pack of both, installed into fresh projects)", () => {
  let packed: PackedPackages;
  const node = (project: InstalledPackage, args: string[], cwd = project.project) =>
    runCommand(process.execPath, args, { cwd, env: project.env, timeoutMs: 60_000 });

  before(async function () {
    this.timeout(420_000);
    packed = await packedPackages();
    for (const { filename, entryCount, size, unpackedSize } of [packed.coordinator, packed.client]) {
      console.log(`      ${filename}: ${entryCount} files, ${size} bytes packed, ${unpackedSize} unpacked`);
    }
  });

  it("gives both packages the same version, and the coordinator depends on the client at exactly that version", () => {
    const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    const client = JSON.parse(readFileSync(join(ROOT, "packages/client/package.json"), "utf8"));
    expect([root.name, client.name]).to.deep.equal([COORDINATOR, CLIENT]);
    expect(packed.coordinator.filename).to.equal(`${COORDINATOR}-${root.version}.tgz`);
    expect(packed.client.filename).to.equal(`${CLIENT}-${root.version}.tgz`);
    expect(root.dependencies[CLIENT]).to.equal(root.version);
    // One grpc-js and one protobuf runtime in an install of both: the same pins on both sides.
    expect(Object.keys(client.dependencies).sort()).to.deep.equal(CLIENT_DEPENDENCIES);
    for (const dep of CLIENT_RUNTIMES) expect(client.dependencies[dep], dep).to.equal(root.dependencies[dep]);
  });

  describe(`${CLIENT}, installed alone`, () => {
    let pkg: InstalledPackage;

    before(async function () {
      this.timeout(420_000);
      pkg = await installedClient();
    });

    it("ships the compiled client, generated code and wire layer with their .d.ts: no sources, server or CLI", () => {
      const files = paths(packed.client);
      expect(files).to.include.members([
        ...EVERY_PACKAGE,
        "dist/client/index.js",
        "dist/client/index.d.ts",
        "dist/client/index.js.map",
        "dist/client/admin.js",
        "dist/gen/ts/turnstile/v1/turnstile.d.ts",
        "dist/wire/duration.js",
      ]);
      const stray = files.filter(
        (p) =>
          !/^(dist\/(client|gen\/ts|wire)\/|package\.json$|README\.md$|LICENSE$)/.test(p) ||
          (p.endsWith(".ts") && !p.endsWith(".d.ts")),
      );
      expect(stray).to.deep.equal([]);
    });

    it("depends on @grpc/grpc-js, @bufbuild/protobuf and jose only, and installs nothing else but their dependencies", () => {
      const manifest = installedManifest(pkg.project, CLIENT);
      expect(Object.keys(manifest.dependencies ?? {}).sort()).to.deep.equal(CLIENT_DEPENDENCIES);
      expect(manifest.optionalDependencies).to.equal(undefined);
      const tree = installedTree(pkg.project);
      console.log(`      installed (${tree.packages.length} packages): ${tree.packages.join(", ")}`);
      const reachable = tree.closure([CLIENT]);
      expect(tree.packages.filter((p) => !reachable.has(packageName(p)))).to.deep.equal([]);
      expect(tree.packages.filter((p) => serverOnly(packageName(p)))).to.deep.equal([]);
    });

    it(`takes at most ${mb(CLIENT_INSTALL_BOUND_BYTES)} MB on disk, node_modules included`, () => {
      const tree = installedTree(pkg.project);
      console.log(
        `      client-only install: ${mb(tree.bytes)} MB in node_modules (bound ${mb(CLIENT_INSTALL_BOUND_BYTES)} MB); ` +
          `${CLIENT} itself ${mb(tree.bytesOf([CLIENT]))} MB`,
      );
      expect(tree.bytes).to.be.at.most(CLIENT_INSTALL_BOUND_BYTES);
    });

    it("loads only grpc-js, @bufbuild/protobuf and its compiled client, generated code and wire layer on import", async () => {
      const loaded = await loadedModules(pkg.project, pkg.env, CLIENT);
      const own = loaded.files.filter((f) => f.includes(`/node_modules/${CLIENT}/`));
      console.log(`      ${own.length} client modules; packages: ${loaded.packages.join(", ")}`);
      const pattern = new RegExp(`/node_modules/${CLIENT}/dist/(client|gen/ts|wire)/.*\\.js$`);
      expect(own.filter((f) => !pattern.test(f))).to.deep.equal([]);
      expect(own).to.include(`${pkg.project}/node_modules/${CLIENT}/dist/client/index.js`);
      expect(loaded.importedByTurnstile).to.have.members(CLIENT_RUNTIMES);
      expect(loaded.packages.filter(serverOnly)).to.deep.equal([]);
    });

    it("exports its entry and nothing past the exports map", async () => {
      const probe = await node(pkg, [
        "--input-type=module",
        "-e",
        `const { TurnstileClient } = await import(${JSON.stringify(CLIENT)});
         const deep = await import("${CLIENT}/dist/client/turnstile-client.js").then(() => "loaded", (e) => e.code);
         console.log(JSON.stringify({ client: typeof TurnstileClient, deep }));`,
      ]);
      expect(probe.code, probe.stderr).to.equal(0);
      expect(JSON.parse(probe.stdout)).to.deep.equal({ client: "function", deep: "ERR_PACKAGE_PATH_NOT_EXPORTED" });
    });
  });

  describe(`${COORDINATOR} with its client, installed together`, () => {
    let pkg: InstalledPackage;

    before(async function () {
      this.timeout(420_000);
      pkg = await installedPackage();
      const tree = installedTree(pkg.project);
      const all = tree.closure([COORDINATOR]);
      const client = tree.closure([CLIENT]);
      const coordinatorOnly = [...all].filter((name) => !client.has(name));
      console.log(
        `      installed: ${all.size} packages, ${mb(tree.bytesOf(all))} MB; ` +
          `only the coordinator uses ${coordinatorOnly.length} of them, ${mb(tree.bytesOf(coordinatorOnly))} MB`,
      );
    });

    it("ships the compiled coordinator, CLI, bin and docs; its client/ only re-exports the client package", () => {
      const files = paths(packed.coordinator);
      expect(files).to.include.members([
        ...EVERY_PACKAGE,
        "bin/turnstile.js",
        "dist/bin/turnstile-cli.js",
        "dist/client/index.js",
        "dist/client/index.d.ts",
        "dist/client/admin.js",
        "dist/server/cli/serve-command.js",
        "dist/server/store/redis/scripts/acquire.lua",
        "dist/server/store/redis/scripts/includes/hand-on.lua",
        "dist/gen/reflection/turnstile.binpb",
        "dist/gen/reflection/health.binpb",
        "dist/proto/turnstile/v1/turnstile.proto",
      ]);
      expect(files.filter((p) => p.startsWith("dist/client/")).sort()).to.deep.equal([
        "dist/client/admin.js",
        "dist/client/index.d.ts",
        "dist/client/index.js",
      ]);
      const stray = files.filter(
        (p) =>
          !/^(dist\/|docs\/[^/]+\.md$|bin\/turnstile\.js$|package\.json$|README\.md$|LICENSE$)/.test(p) ||
          /\.test\.|\.png$/.test(p) ||
          (p.endsWith(".ts") && p !== "dist/client/index.d.ts"),
      );
      expect(stray).to.deep.equal([]);
    });

    it(`holds one copy of ${CLIENT}, the version ${COORDINATOR} depends on`, () => {
      const coordinator = installedManifest(pkg.project, COORDINATOR);
      expect(coordinator.dependencies?.[CLIENT]).to.equal(coordinator.version);
      expect(installedManifest(pkg.project, CLIENT).version).to.equal(coordinator.version);
      const copies = installedTree(pkg.project).packages.filter((p) => packageName(p) === CLIENT);
      expect(copies).to.deep.equal([`${CLIENT}@${coordinator.version}`]);
    });

    it("typechecks a TypeScript consumer against the packages' own .d.ts files with a stock tsc", async () => {
      const tsc = await node(pkg, [TSC, "-p", "tsconfig.json"]);
      expect(tsc.code, tsc.stdout + tsc.stderr).to.equal(0);
    });

    it(`exports the client as '${COORDINATOR}/client', the very module of ${CLIENT}, and nothing past the exports map`, async () => {
      const probe = await node(pkg, [
        "--input-type=module",
        "-e",
        `const viaCoordinator = await import("${COORDINATOR}/client");
         const client = await import("${CLIENT}");
         const same = ["TurnstileClient", "TurnstileError", "LostLockError", "Lock"]
           .every((name) => typeof client[name] === "function" && viaCoordinator[name] === client[name]);
         const code = (specifier) => import(specifier).then(() => "loaded", (e) => e.code);
         console.log(JSON.stringify({ same, root: await code("${COORDINATOR}"),
           deep: await code("${COORDINATOR}/dist/server/coordinator.js") }));`,
      ]);
      expect(probe.code, probe.stderr).to.equal(0);
      expect(JSON.parse(probe.stdout)).to.deep.equal({
        same: true,
        root: "ERR_PACKAGE_PATH_NOT_EXPORTED",
        deep: "ERR_PACKAGE_PATH_NOT_EXPORTED",
      });
    });

    it(`loads only its re-export and the client package's modules on import of '${COORDINATOR}/client'`, async () => {
      const loaded = await loadedModules(pkg.project, pkg.env, `${COORDINATOR}/client`);
      const ownCoordinator = loaded.files.filter((f) => f.includes(`/node_modules/${COORDINATOR}/`));
      expect(ownCoordinator).to.deep.equal([`${pkg.project}/node_modules/${COORDINATOR}/dist/client/index.js`]);
      expect(loaded.importedByTurnstile).to.have.members(CLIENT_RUNTIMES);
      expect(loaded.packages.filter(serverOnly)).to.deep.equal([]);
    });

    it("resolves both names inside this repository too: the workspace link and self-reference to the built dist/", async () => {
      const probe = await node(
        pkg,
        [
          "--input-type=module",
          "-e",
          `const viaCoordinator = await import("${COORDINATOR}/client");
           const client = await import("${CLIENT}");
           console.log(viaCoordinator.TurnstileClient === client.TurnstileClient,
             import.meta.resolve("${COORDINATOR}/client"), import.meta.resolve("${CLIENT}"));`,
        ],
        ROOT,
      );
      expect(probe.code, probe.stderr).to.equal(0);
      expect(probe.stdout.trim()).to.equal(
        `true file://${ROOT}dist/client/index.js file://${ROOT}packages/client/dist/client/index.js`,
      );
    });
  });
});
