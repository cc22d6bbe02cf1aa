import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** What `npm run build` compiles into dist/ (and the client package) from, besides the trees' sources. */
const BUILD_INPUTS = ["scripts/build.js", "package.json", "tsconfig.build.json"];

/** The compiled coordinator CLI the bench runs: what `npx turnstile serve` and the container run. */
export const COMPILED_CLI = join(ROOT, "dist/bin/turnstile-cli.js");

/** The compiled client the contender processes load (packages/client/dist, else dist/client). */
export function compiledClientEntry(): string {
  return existsSync(join(ROOT, "packages/client"))
    ? join(ROOT, "packages/client/dist/client/index.js")
    : join(ROOT, "dist/client/index.js");
}

/** True when `built` exists and is newer than every source of `trees` and the build's own inputs. */
export function isFresh(built: string, trees: readonly string[]): boolean {
  const builtAt = statSync(built, { throwIfNoEntry: false })?.mtimeMs;
  if (builtAt === undefined) return false;
  const sources = [...BUILD_INPUTS];
  for (const tree of trees)
    for (const f of readdirSync(join(ROOT, tree), { recursive: true, encoding: "utf8" })) sources.push(join(tree, f));
  return sources.every((f) => (statSync(join(ROOT, f), { throwIfNoEntry: false })?.mtimeMs ?? 0) <= builtAt);
}

let built = false;

/**
 * Runs `npm run build` unless the compiled coordinator and client are newer than all their sources, so
 * the bench never measures a stale dist/. Returns what it did; throws with the build's output tail.
 */
export function ensureCompiled(): "built" | "fresh" {
  if (built) return "fresh";
  const trees = ["server", "client", "cli", "gen", "wire", "bin"];
  if (isFresh(COMPILED_CLI, trees) && isFresh(compiledClientEntry(), ["client", "gen", "wire"])) {
    built = true;
    return "fresh";
  }
  const r = spawnSync("npm", ["run", "-s", "build"], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`npm run build failed: ${(r.stdout + r.stderr).slice(-600)}`);
  built = true;
  return "built";
}
