import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanEnv, runCommand } from "../harness/run-command.js";

/** The repository root: where `npm pack` runs. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
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

/** A fresh project that installed the packed tarball, with the fixtures copied into it. */
export interface InstalledPackage {
  packed: Packed;
  /** The consumer project: package.json, node_modules/turnstile, the fixtures. */
  project: string;
  /** The environment every command runs with (no npm_* script variables, NODE_OPTIONS or TURNSTILE_*). */
  env: NodeJS.ProcessEnv;
}

let installing: Promise<InstalledPackage> | undefined;

/**
 * Packs this repository (`npm pack` runs the `prepare` script, i.e. the build, as `npm publish`
 * would) and installs the tarball with `npm install --prefer-offline` into a fresh project under the
 * OS temp directory, once per test run; the directory is removed when the process exits.
 */
export function installedPackage(): Promise<InstalledPackage> {
  installing ??= install();
  return installing;
}

async function install(): Promise<InstalledPackage> {
  const env = cleanEnv();
  const dir = mkdtempSync(join(tmpdir(), "turnstile-pack-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  const pack = await runCommand("npm", ["pack", "--json", "--pack-destination", dir], {
    cwd: ROOT,
    env,
    timeoutMs: 180_000,
  });
  if (pack.code !== 0) throw new Error(`npm pack failed (${pack.code}):\n${pack.stdout}\n${pack.stderr}`);
  const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.search(/^\[/m))) as Packed[];
  const project = join(dir, "consumer");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  for (const file of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, file), join(project, file));
  const tarball = join(dir, packed.filename);
  const args = ["install", tarball, `@types/node@${TYPES_NODE_VERSION}`, "--prefer-offline", "--no-audit", "--no-fund"];
  const installed = await runCommand("npm", args, { cwd: project, env, timeoutMs: 240_000 });
  if (installed.code !== 0) throw new Error(`npm install failed (${installed.code}):\n${installed.stderr}`);
  return { packed, project, env };
}
