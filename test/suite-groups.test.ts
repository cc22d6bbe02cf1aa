import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const require = createRequire(import.meta.url);

interface SuiteGroups {
  REDIS_STARTERS: string[];
  SKIPPED_REPORT: string;
  importSpecifiers(source: string): string[];
  suiteGroups(): { redis: { file: string; chain: string[] }[]; pure: string[] };
  specWithoutRedis(): string[];
}
const groups: SuiteGroups = require("./harness/suite-groups.cjs");

/** Every .ts file under `dir` (repo-relative), walked here apart from the classifier's own walk. */
function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".ts") && !path.includes("node_modules"))
    .map((path) => `${dir}/${path.split("\\").join("/")}`)
    .sort();
}

/** Source with line and block comments removed, so a comment naming redis-server does not count. */
function code(file: string): string {
  return readFileSync(join(ROOT, file), "utf8").replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, "");
}

// .mocharc.cjs picks the suites to run without Redis from these groups; a suite in neither would be
// left out of that run silently, and a Redis starter the classifier does not know would put a Redis
// suite in the pure group.
describe("test suite groups (test/harness/suite-groups.cjs)", () => {
  const { redis, pure } = groups.suiteGroups();
  const redisFiles = redis.map((suite) => suite.file);

  it("puts every test file npm test runs in exactly one group: needs Redis, or pure", () => {
    const all = tsFiles("test").filter(
      (f) => f.endsWith(".test.ts") && !/^test\/(interop|failover|many-locks)\//.test(f),
    );
    expect([...redisFiles, ...pure].sort()).to.deep.equal(all);
    expect(redisFiles.filter((file) => pure.includes(file))).to.deep.equal([]);
  });

  it("knows every test module that starts redis-server or redis-cli as a Redis starter", () => {
    const spawnsRedis = /\b(?:spawn|spawnSync|execFile|execFileSync|exec|execSync)\(\s*["'`]redis-(?:server|cli)\b/;
    const starters = tsFiles("test").filter((file) => spawnsRedis.test(code(file)));
    expect(starters).to.not.be.empty;
    expect(starters.filter((file) => !groups.REDIS_STARTERS.includes(file))).to.deep.equal([]);
  });

  it("follows run-time imports (multi-line, side-effect, re-export, dynamic) but not type-only ones", () => {
    const source = [
      'import { expect } from "chai";',
      'import {\n  type TestRedis,\n  startRedis,\n} from "./harness/redis-server.js";',
      'import "./side-effect.js";',
      'export { thing } from "./re-export.js";',
      'import type { Only } from "./types-only.js";',
      'export type { Also } from "./types-too.js";',
      'const late = await import("./dynamic.js");',
    ].join("\n");
    expect(groups.importSpecifiers(source)).to.deep.equal([
      "./harness/redis-server.js",
      "./side-effect.js",
      "./re-export.js",
      "./dynamic.js",
    ]);
  });

  it("gives each Redis suite the import chain that ends at a Redis starter", () => {
    for (const { file, chain } of redis) {
      expect(chain[0]).to.equal(file);
      expect(groups.REDIS_STARTERS).to.include(chain.at(-1));
    }
    expect(redisFiles).to.include.members(["test/store/redis-store.test.ts", "test/store/scripts/acquire.test.ts"]);
  });

  it("runs the embedded-store and unit suites without Redis, and reports the Redis ones as skipped", () => {
    expect(pure).to.include.members([
      "test/store/memory-store.test.ts",
      "test/store/conformance/memory-store.test.ts",
      "test/lease-clock.test.ts",
      "test/suite-groups.test.ts",
    ]);
    expect(groups.specWithoutRedis()).to.deep.equal([...pure, groups.SKIPPED_REPORT]);
  });
});
