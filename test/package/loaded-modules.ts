import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCommand } from "../harness/run-command.js";
import { CLIENT, COORDINATOR } from "./installed-package.js";

const OWN = [COORDINATOR, CLIENT];

/** What importing one specifier loaded, in a project that installed the packed tarball. */
export interface LoadedModules {
  /** Every file loaded: ES modules the resolve hook saw, and CommonJS modules in require.cache. */
  files: string[];
  /** The npm packages those files belong to, sorted. */
  packages: string[];
  /** The packages that Turnstile's own modules (either package) import directly, sorted. */
  importedByTurnstile: string[];
}

/**
 * Imports `specifier` in a fresh node process in `project` (which holds the fixtures
 * trace-imports.mjs and trace-imports-hooks.mjs) and reports every module that import loaded.
 */
export async function loadedModules(
  project: string,
  env: NodeJS.ProcessEnv,
  specifier: string,
): Promise<LoadedModules> {
  const traceFile = join(project, `trace-${process.pid}-${Date.now()}.txt`);
  const run = await runCommand(
    process.execPath,
    [
      "--import",
      "./trace-imports.mjs",
      "--input-type=module",
      "-e",
      `import { createRequire } from "node:module";
       await import(${JSON.stringify(specifier)});
       console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`,
    ],
    { cwd: project, env: { ...env, TRACE_FILE: traceFile }, timeoutMs: 60_000 },
  );
  if (run.code !== 0) throw new Error(`importing ${specifier} failed:\n${run.stderr}`);
  const edges = readFileSync(traceFile, "utf8")
    .trim()
    .split("\n")
    .map((line) => line.split(" -> ").map(toPath));
  const files = [...new Set([...edges.map(([, file]) => file), ...(JSON.parse(run.stdout) as string[])])].filter((f) =>
    f.startsWith("/"),
  );
  const packages = [...new Set(files.map(packageOf).filter((p) => p !== undefined))].sort();
  const importedByTurnstile = [
    ...new Set(
      edges
        .filter(([parent]) => OWN.includes(packageOf(parent) ?? ""))
        .map(([, file]) => packageOf(file))
        .filter((p) => p !== undefined && !OWN.includes(p)),
    ),
  ].sort();
  return { files, packages, importedByTurnstile: importedByTurnstile as string[] };
}

function toPath(url: string): string {
  return url.startsWith("file://") ? decodeURIComponent(new URL(url).pathname) : url;
}

/** The npm package a file belongs to (the last node_modules segment), or undefined for node: builtins. */
function packageOf(file: string): string | undefined {
  const match = file.match(/.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  return match?.[1];
}
