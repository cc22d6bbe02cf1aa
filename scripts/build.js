// npm run build: compiles server/, client/, cli/, gen/, wire/ and bin/ to dist/ (JavaScript, .d.ts, source maps
// with the TypeScript inlined) with tsconfig.build.json, then copies the files the compiled code
// reads at run time: the Lua scripts beside their modules, the console's static files and
// gen/reflection/*.binpb (server reflection serves them), plus proto/ for users of other languages.
// dist/ is deleted first so a removed source leaves nothing behind. `npm ci` and
// `npm pack` run it through the `prepare` script.
import { spawnSync } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));

rmSync(`${root}dist`, { recursive: true, force: true });
const compiled = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
if (compiled.status !== 0) {
  process.stderr.write(`build: tsc -p tsconfig.build.json failed (exit ${compiled.status ?? compiled.signal})\n`);
  process.exit(1);
}
// Every non-TypeScript file under the compiled trees is a run-time asset (today: the .lua scripts).
for (const tree of ["server", "client", "gen", "wire"]) {
  cpSync(`${root}${tree}`, `${root}dist/${tree}`, { recursive: true, filter: (src) => !src.endsWith(".ts") });
}
cpSync(`${root}proto`, `${root}dist/proto`, { recursive: true });
