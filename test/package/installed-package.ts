import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanEnv, runCommand } from "../harness/run-command.js";

/** The repository root: where `npm pack` runs. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The coordinator package (the repository root) and the client-only package (packages/client). */
export const COORDINATOR = "turnstile-locks";
export const CLIENT = "turnstile-locks-client";
const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
const TYPES_NODE_VERSION = JSON.parse(
  readFileSync(join(ROOT, "node_modules/@types/node/package.json"), "utf8"),
).version;

/** What `npm pack --json` says about the tarball it wrote. */
export interface Packed {
  filename: string;
  entryCount: number;
  size: number;
  unpackedSize: number;
  files: { path: string }[];
}

/** Both tarballs, packed once per test run into a temporary directory. */
export interface PackedPackages {
  dir: string;
  coordinator: Packed;
  client: Packed;
}

/** A fresh project that installed packed tarballs, with the fixtures copied into it. */
export interface InstalledPackage {
  packed: PackedPackages;
  /** The consumer project: package.json, node_modules/…, the fixtures. */
  project: string;
  /** The environment every command runs with (no npm_* script variables, NODE_OPTIONS or TURNSTILE_*). */
  env: NodeJS.ProcessEnv;
}

let packing: Promise<PackedPackages> | undefined;
let installingFull: Promise<InstalledPackage> | undefined;
let installingClient: Promise<InstalledPackage> | undefined;

/**
 * Packs both packages once per test run: `npm pack` at the root runs the `prepare` script (the build,
 * which also fills packages/client/dist/), as `npm publish` would; the client package is then packed
 * from that build (`--ignore-scripts` skips its `prepack`, the same build again). The directory is
 * removed when the process exits.
 */
export function packedPackages(): Promise<PackedPackages> {
  packing ??= pack();
  return packing;
}

/**
 * The full install: a fresh project under the OS temp directory that ran `npm install` of both
 * tarballs (the coordinator's dependency on the client is met by the client tarball) and
 * @types/node, once per test run.
 */
export function installedPackage(): Promise<InstalledPackage> {
  installingFull ??= packedPackages().then((packed) =>
    install(packed, "full", [packed.coordinator, packed.client], [`@types/node@${TYPES_NODE_VERSION}`]),
  );
  return installingFull;
}

/** The client-only install: a fresh project that ran `npm install` of the client tarball alone. */
export function installedClient(): Promise<InstalledPackage> {
  installingClient ??= packedPackages().then((packed) => install(packed, "client-only", [packed.client], []));
  return installingClient;
}

async function pack(): Promise<PackedPackages> {
  const env = cleanEnv();
  const dir = mkdtempSync(join(tmpdir(), "turnstile-pack-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  const packOne = async (extra: string[]) => {
    const args = ["pack", "--json", "--pack-destination", dir, ...extra];
    const run = await runCommand("npm", args, { cwd: ROOT, env, timeoutMs: 180_000 });
    if (run.code !== 0) throw new Error(`npm ${args.join(" ")} failed (${run.code}):\n${run.stdout}\n${run.stderr}`);
    return (JSON.parse(run.stdout.slice(run.stdout.search(/^\[/m))) as Packed[])[0];
  };
  const coordinator = await packOne([]);
  const client = await packOne(["--ignore-scripts", "--workspace", CLIENT]);
  return { dir, coordinator, client };
}

async function install(
  packed: PackedPackages,
  name: string,
  tarballs: Packed[],
  others: string[],
): Promise<InstalledPackage> {
  const env = cleanEnv();
  const project = join(packed.dir, name);
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name, private: true, type: "module" }));
  for (const file of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, file), join(project, file));
  const args = [
    "install",
    ...tarballs.map((t) => join(packed.dir, t.filename)),
    ...others,
    "--prefer-offline",
    "--no-audit",
    "--no-fund",
  ];
  const installed = await runCommand("npm", args, { cwd: project, env, timeoutMs: 240_000 });
  if (installed.code !== 0) throw new Error(`npm install (${name}) failed (${installed.code}):\n${installed.stderr}`);
  return { packed, project, env };
}
